/**
 * A plan the model proposed (docs/wire-protocol.md#plans), as a checklist:
 * its goal, its stages, its steps. Until the user decides, once, each step
 * has a checkbox (unchecked: skipped) and an editable title, with Approve /
 * Cancel and the question's countdown; after, the card is read-only and
 * shows each step's status as the host's patches set it (the turn's state
 * holds the plan, `state.ts`; this card only draws it). History draws a
 * stored plan with the same checklist. DOM APIs only; the plan's texts are
 * the model's and go through textContent.
 */
import type { AgentPlan, PlanEdit, PlanMessage, PlanStep } from "../generated/wire.js";
import { cardButton, cardFrame, countdown, type CardFrame } from "./card.js";

type StepStatus = PlanStep["status"];

/** Longest step title the host takes. */
const MAX_TITLE_CHARS = 200;

const STATUS: Record<StepStatus, [glyph: string, label: string]> = {
  pending: ["○", "pending"],
  running: ["↻", "running"],
  done: ["✓", "done"],
  failed: ["✗", "failed"],
  skipped: ["–", "skipped"],
};

/** Sends the user's decision: approved with the edit (if any), or cancelled. */
export type PlanAnswer = (approved: boolean, edit?: PlanEdit) => void;

function el(doc: Document, tag: string, cls?: string, text?: string): HTMLElement {
  const e = doc.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/**
 * The plan's stages and steps, one list per stage, numbered across the
 * plan; `step` draws one step's row (read-only status, or the edit controls).
 */
function stages(doc: Document, plan: AgentPlan, step: (s: PlanStep, n: number) => Node[]): HTMLElement {
  const box = el(doc, "div", "plan-stages");
  let n = 0;
  for (const stage of plan.stages) {
    const section = el(doc, "div", "plan-stage");
    const name = el(doc, "div", "plan-stage-name", stage.name);
    name.id = `plan-${plan.id}-${stage.id}`.replace(/[^A-Za-z0-9_-]/g, "_");
    if (stage.mode === "parallel") name.append(el(doc, "span", "plan-stage-mode", " · independent steps"));
    const list = el(doc, "ol", "plan-steps") as HTMLOListElement;
    list.start = n + 1;
    list.setAttribute("aria-labelledby", name.id);
    for (const s of stage.steps) {
      n += 1;
      const li = el(doc, "li", "plan-step");
      li.dataset["stepId"] = s.id;
      li.dataset["status"] = s.status;
      li.append(...step(s, n));
      list.append(li);
    }
    section.append(name, list);
    box.append(section);
  }
  return box;
}

/** A step as it stands: its status (glyph and words), its title, why it failed or was skipped. */
function statusRow(doc: Document, s: PlanStep): Node[] {
  const [glyph, label] = STATUS[s.status];
  const icon = el(doc, "span", "icon", glyph);
  icon.setAttribute("role", "img");
  icon.setAttribute("aria-label", label);
  const nodes: Node[] = [icon, doc.createTextNode(" "), el(doc, "span", "plan-step-title", s.title)];
  if (s.message) nodes.push(el(doc, "div", "plan-step-message", s.message));
  return nodes;
}

/** The plan read-only, each step with its status (the live card once decided, and history). */
export function planChecklist(doc: Document, plan: AgentPlan): HTMLElement {
  const box = el(doc, "div", "plan-checklist");
  box.append(el(doc, "div", "plan-goal", plan.goal), stages(doc, plan, (s) => statusRow(doc, s)));
  return box;
}

interface StepControls {
  step: PlanStep;
  run: HTMLInputElement;
  title: HTMLInputElement;
}

/** What the user changed: steps unchecked, titles reworded (an emptied title keeps the model's). */
export function planEdit(controls: readonly StepControls[]): PlanEdit | undefined {
  const skip = controls.filter((c) => !c.run.checked).map((c) => c.step.id);
  const titles = controls
    .map((c) => ({ id: c.step.id, title: c.title.value.trim() }))
    .filter((t, i) => t.title && t.title !== controls[i]?.step.title.trim());
  return skip.length || titles.length ? { skip, titles } : undefined;
}

export class PlanCard {
  readonly root: HTMLElement;
  private readonly frame: CardFrame;
  private body: HTMLElement;
  private controls: StepControls[] = [];
  /** How to edit: said only while the plan can be edited. */
  private readonly note: HTMLElement;
  private timer: ReturnType<typeof setInterval> | null = null;
  private decided = false;
  /** The user pressed Cancel (the turn then ends with nothing run). */
  private declined = false;
  private plan: AgentPlan;

  constructor(
    private readonly doc: Document,
    msg: PlanMessage,
    private readonly send: PlanAnswer,
    now: () => number = () => Date.now(),
  ) {
    this.plan = msg.plan;
    this.frame = cardFrame(doc, "approval-card plan-card", "Plan to approve", `Plan: ${msg.plan.goal}`);
    this.root = this.frame.root;
    this.root.dataset["callId"] = msg.call_id;
    this.body = stages(doc, msg.plan, (s, n) => this.editRow(s, n));
    this.note = el(doc, "div", "approval-detail", "Uncheck a step to skip it; edit a title to reword it. Laika still asks before each action.");
    const approve = cardButton(doc, "Approve", true);
    const cancel = cardButton(doc, "Cancel");
    approve.addEventListener("click", () => this.decide(true));
    cancel.addEventListener("click", () => this.decide(false));
    this.frame.buttons.append(approve, cancel);
    this.frame.status.setAttribute("role", "status");
    this.root.append(this.body, this.note, this.frame.buttons, this.frame.status);
    this.timer = countdown(doc, this.frame.buttons, msg.expires_in_ms, now, () => this.close("Expired: nobody answered in time, so nothing was run."));
  }

  private editRow(s: PlanStep, n: number): Node[] {
    const run = this.doc.createElement("input");
    run.type = "checkbox";
    run.checked = true;
    run.className = "plan-step-run";
    run.setAttribute("aria-label", `Run step ${n}`);
    const title = this.doc.createElement("input");
    title.type = "text";
    title.className = "plan-step-edit";
    title.value = s.title;
    title.maxLength = MAX_TITLE_CHARS;
    title.setAttribute("aria-label", `Step ${n} title`);
    run.addEventListener("change", () => {
      title.disabled = !run.checked;
    });
    this.controls.push({ step: s, run, title });
    return [run, title];
  }

  /** The user chose, once: the edit goes with an approval; the card turns read-only. */
  private decide(approved: boolean): void {
    if (this.decided) return;
    const edit = approved ? planEdit(this.controls) : undefined;
    this.declined = !approved;
    this.close(approved ? "Approved — the steps run in order." : "Cancelled — nothing was run.");
    this.send(approved, edit);
  }

  /** Whether the user cancelled the plan. */
  cancelled(): boolean {
    return this.declined;
  }

  /** The plan as the host has it now (its patches applied): drawn once the card is read-only. */
  update(plan: AgentPlan): void {
    this.plan = plan;
    if (this.decided) this.draw();
  }

  private draw(): void {
    const next = stages(this.doc, this.plan, (s) => statusRow(this.doc, s));
    this.body.replaceWith(next);
    this.body = next;
  }

  /** How the host took the decision; a refusal is said, the card stays read-only. */
  answered(accepted: boolean, code?: string, message?: string): void {
    if (!accepted) this.frame.status.textContent = code === "APPROVAL_EXPIRED" ? "Expired: nothing was run." : `Not accepted (${code ?? "error"}): ${message ?? ""}`.trim();
  }

  /** No decision can be made any more (decided, expired, the turn stopped or ended). */
  close(status?: string): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    // Once decided, the steps' statuses tell how it went.
    if (this.decided) return;
    this.frame.status.textContent = status ?? "Not answered: the turn ended.";
    this.decided = true;
    this.controls = [];
    this.frame.buttons.remove();
    this.note.remove();
    this.root.classList.add("closed");
    this.draw();
  }
}
