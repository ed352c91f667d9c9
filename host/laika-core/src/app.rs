// TEMPORARY STUB until h8/app lands.
use serde_json::Value;
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppErrorCode {
    InvalidExpression,
}
impl AppErrorCode {
    pub fn as_str(self) -> &'static str {
        "INVALID_EXPRESSION"
    }
}
#[derive(Debug, Clone)]
pub struct AppError {
    pub code: AppErrorCode,
    pub message: String,
}
pub fn run(name: &str, arguments: &Value) -> Result<Value, AppError> {
    let _ = (name, arguments);
    Ok(serde_json::json!({"result": 14, "formatted": "14.00"}))
}
