import { describe, expect, it } from "vitest";
import { CallBook, readPlanEdit } from "../src/background/calls";
import { PlanCard, planChecklist } from "../src/sidebar/plan-card";
import { initialState, reduce, type SidebarAction, type SidebarState } from "../src/sidebar/state";
import { StepList } from "../src/sidebar/steps";
import type { AgentPlan, PlanMessage, PlanEdit } from "../src/generated/wire";
import { checkExtensionMessage, checkHostMessage } from "../src/shared/validate";
import { htmlDoc } from "./helpers";
import { hostId, toolCall } from "./wire-fixtures";

const DIGEST = "d".repeat(64);
const step = (id: string, title: string) => ({ id, title, intent: "research" as const, executor: "research" as const, tools: [], inputs: [], outputs: [], status: "pending" as const });
const PLAN: AgentPlan = {
  id: "plan-1",
  goal: "Compare the packs",
  constraints: [],
  stages: [
    { id: "read", name: "Read", mode: "parallel", steps: [step("s1", "Read the list"), step("s2", "Compare them")] },
    { id: "act", name: "Open", mode: "sequence", steps: [step("s3", "Open the light one")] },
  ],
};

function planMsg(over: Partial<PlanMessage> = {}): PlanMessage {
  return { type: "plan", id: hostId(), reply_to: "turn-1", conversation_id: "c", turn: 1, step: 1, call_id: "plan:1", digest: DIGEST, plan: PLAN, expires_in_ms: 120_000, ...over };
}

function patch(ops: { op: "replace"; path: string; value: unknown }[], entityId = "plan-1"): Extract<SidebarAction, { kind: "host" }>["msg"] {
  return { type: "entity_patch", id: hostId(), reply_to: "turn-1", conversation_id: "c", turn: 1, source: "plan", entity: "plan", entity_id: entityId, patch: ops };
}

const host = (msg: Extract<SidebarAction, { kind: "host" }>["msg"]): SidebarAction => ({ kind: "host", msg });

function statuses(plan: AgentPlan | undefined): string[] {
  return (plan?.stages ?? []).flatMap((s) => s.steps.map((st) => st.status));
}

describe("a plan in the sidebar's state", () => {
  it("is the plan event's, moved only by the host's patches of that plan", () => {
    expect(checkHostMessage(planMsg()).ok).toBe(true);
    const started: SidebarState = reduce(initialState(), { kind: "asked", id: "turn-1", ask: { task: "web.answer", text: "q", label: "q", plans: true } });
    let s = reduce(started, host(planMsg()));
    expect(s.turns["turn-1"]?.plan?.callId).toBe("plan:1");
    expect(s.turns["turn-1"]?.progress).toMatch(/plan/);
    const running = patch([{ op: "replace", path: "/stages/0/steps/0/status", value: "running" }]);
    expect(checkHostMessage(running).ok).toBe(true);
    s = reduce(s, host(running));
    expect(statuses(s.turns["turn-1"]?.plan?.plan)).toEqual(["running", "pending", "pending"]);
    // Another plan's patch, one that does not apply, and a second plan change nothing.
    const before = s;
    s = reduce(s, host(patch([{ op: "replace", path: "/stages/0/steps/0/status", value: "done" }], "plan-2")));
    s = reduce(s, host(patch([{ op: "replace", path: "/stages/9/steps/0/status", value: "done" }])));
    s = reduce(s, host(planMsg({ call_id: "plan:1b", plan: { ...PLAN, id: "plan-2" } })));
    expect(s.turns["turn-1"]?.plan).toBe(before.turns["turn-1"]?.plan);
  });
});

describe("the plan card", () => {
  function card() {
    const doc = htmlDoc("<main></main>");
    const sent: [boolean, PlanEdit | undefined][] = [];
    const c = new PlanCard(doc, planMsg(), (ok, edit) => sent.push([ok, edit]), () => 0);
    doc.body.append(c.root);
    return { doc, c, sent };
  }

  it("offers each step as a named checkbox and title, and sends the edit once with Approve", () => {
    const { c, sent } = card();
    const inputs = Array.from(c.root.querySelectorAll("input"));
    expect(inputs.map((i) => i.getAttribute("aria-label"))).toEqual(["Run step 1", "Step 1 title", "Run step 2", "Step 2 title", "Run step 3", "Step 3 title"]);
    expect(c.root.getAttribute("role")).toBe("group");
    expect(c.root.textContent).toContain("Expires in 2:00");
    const [, title1, run2] = inputs;
    if (!title1 || !run2) throw new Error("controls");
    title1.value = "  Read the packs  ";
    run2.checked = false;
    const [approve, cancel] = Array.from(c.root.querySelectorAll("button"));
    approve?.click();
    cancel?.click();
    expect(sent).toEqual([[true, { skip: ["s2"], titles: [{ id: "s1", title: "Read the packs" }] }]]);
    expect(c.root.querySelector("input, button")).toBeNull();
    expect(c.root.querySelector(".approval-status")?.textContent).toMatch(/Approved/);
  });

  it("sends no edit for an untouched plan, none with Cancel, and shows the host's statuses once decided", () => {
    const { c, sent } = card();
    c.root.querySelectorAll("button")[1]?.click();
    expect(sent).toEqual([[false, undefined]]);
    expect(c.cancelled()).toBe(true);
    const skipped: AgentPlan = structuredClone(PLAN);
    for (const st of skipped.stages.flatMap((x) => x.steps)) Object.assign(st, { status: "skipped", message: "Cancelled." });
    c.update(skipped);
    const rows = Array.from(c.root.querySelectorAll<HTMLElement>(".plan-step"));
    expect(rows.map((r) => r.dataset["status"])).toEqual(["skipped", "skipped", "skipped"]);
    expect(rows[0]?.querySelector(".icon")?.getAttribute("aria-label")).toBe("skipped");
    const { c: untouched, sent: sent2 } = card();
    untouched.root.querySelector("button")?.click();
    expect(sent2).toEqual([[true, undefined]]);
  });

  it("closes unanswered when the turn ends, and history draws the same checklist", () => {
    const { c, sent } = card();
    c.close();
    expect(c.root.querySelector("button")).toBeNull();
    expect(c.root.textContent).toContain("Not answered");
    expect(sent).toEqual([]);
    const doc = htmlDoc("<main></main>");
    const list = planChecklist(doc, PLAN);
    expect(list.querySelector(".plan-goal")?.textContent).toBe("Compare the packs");
    expect(Array.from(list.querySelectorAll("ol")).map((o) => (o as HTMLOListElement).start)).toEqual([1, 3]);
  });
});

describe("a plan's step on a call's approval card", () => {
  it("says which step of the plan asks", () => {
    const doc = htmlDoc("<main></main>");
    const steps = new StepList(doc, () => undefined, () => 0);
    steps.toolCall(toolCall("turn-1", { decision: "ask", expires_in_ms: 1000, plan_step: { plan_id: "plan-1", step_id: "s3", index: 3, total: 3, title: "Open the light one" } }));
    expect(steps.el.querySelector(".approval-plan-step")?.textContent).toBe("Step 3 of 3: Open the light one");
  });
});

describe("a plan's approval in the background", () => {
  it("rebuilds an edit from its fields only, and refuses one out of shape", () => {
    expect(readPlanEdit({ skip: ["s2"], titles: [{ id: "s1", title: " New " , extra: 1 }], more: true })).toEqual({ skip: ["s2"], titles: [{ id: "s1", title: "New" }] });
    expect(readPlanEdit({})).toEqual({ skip: [], titles: [] });
    expect(readPlanEdit(null)).toBeNull();
    expect(readPlanEdit({ skip: "s2" })).toBeNull();
    expect(readPlanEdit({ skip: Array.from({ length: 9 }, (_, i) => `s${i}`) })).toBeNull();
    expect(readPlanEdit({ skip: ["x".repeat(65)] })).toBeNull();
    expect(readPlanEdit({ titles: [{ id: "s1", title: "   " }] })).toBeNull();
    expect(readPlanEdit({ titles: [{ id: "s1", title: "t".repeat(201) }] })).toBeNull();
    expect(readPlanEdit({ titles: [{ id: 1, title: "t" }] })).toBeNull();
  });

  it("sends the edit with an approval of the plan only, never with a call's or a cancel", () => {
    const me = {};
    const book = new CallBook<object>();
    const edit = { skip: ["s2"], titles: [] };
    book.proposeQuestion(planMsg(), "turn-1", me);
    const approval = book.answer("plan:1", me, true, "ap-p", { plan: edit });
    expect(approval).toEqual({ type: "approval", id: "ap-p", call_id: "plan:1", digest: DIGEST, approved: true, plan: edit });
    expect(checkExtensionMessage(approval).ok).toBe(true);
    expect(book.answer("plan:1", me, true, "ap-again", { plan: edit })).toBeNull();
    book.proposeQuestion(planMsg({ call_id: "plan:2" }), "turn-2", me);
    expect(book.answer("plan:2", me, false, "ap-no", { plan: edit })).toEqual({ type: "approval", id: "ap-no", call_id: "plan:2", digest: DIGEST, approved: false });
    book.propose(toolCall("turn-1", { call_id: "k", decision: "ask", expires_in_ms: 1000 }), "turn-1", me);
    expect(book.answer("k", me, true, "ap-k", { plan: edit })).not.toHaveProperty("plan");
  });
});
