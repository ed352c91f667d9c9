//! The render tree a model answer is shown as. The sanitizer that makes one
//! from model output is `laika_core::render`.

pub mod ast;
