// statewright dashboard: plain JavaScript, no dependencies, served by the
// Go binary (dashboard/). All URLs are relative so the page works under
// any mount prefix.
"use strict";

const $ = (id) => document.getElementById(id);
let csrf = "";
let role = "";
let currentRun = null; // the run shown on the run page (summary)
let refreshTimer = null;

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const c of kids) e.append(c instanceof Node ? c : document.createTextNode(c == null ? "" : String(c)));
  return e;
}

async function api(path, opts) {
  opts = opts || {};
  const headers = Object.assign({}, opts.headers || {});
  if (opts.body !== undefined) {
    headers["Content-Type"] = "application/json";
    headers["X-CSRF-Token"] = csrf;
  }
  const res = await fetch(path, {
    method: opts.method || (opts.body !== undefined ? "POST" : "GET"),
    credentials: "same-origin",
    headers,
    body: opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
  });
  const ct = res.headers.get("Content-Type") || "";
  const data = ct.includes("json") ? await res.json() : await res.text();
  if (res.status === 401) {
    showLogin();
    throw new Error((data && data.error) || "sign in first");
  }
  if (!res.ok) throw new Error((data && data.error) || res.statusText);
  return data;
}

function show(id) {
  for (const s of ["login", "runs", "run", "editor"]) $(s).hidden = s !== id;
}

function showLogin() {
  show("login");
  $("who").textContent = "";
}

function clock(t) {
  if (!t) return "";
  const d = new Date(t);
  return d.toLocaleTimeString([], { hour12: false });
}

// ---- live updates -------------------------------------------------------

let source = null;
function connect() {
  if (source) source.close();
  source = new EventSource("api/stream");
  source.addEventListener("open", () => $("live").classList.add("on"));
  source.addEventListener("error", () => $("live").classList.remove("on"));
  source.addEventListener("change", () => {
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(refresh, 50);
  });
}

function refresh() {
  const h = location.hash || "#/";
  if (h.startsWith("#/run/")) loadRun(decodeURIComponent(h.slice(6)), true);
  else if (h === "#/" || h === "") loadRuns();
}

// ---- routing ------------------------------------------------------------

function route() {
  const h = location.hash || "#/";
  if (h.startsWith("#/run/")) {
    show("run");
    loadRun(decodeURIComponent(h.slice(6)), false);
  } else if (h === "#/editor") {
    show("editor");
    initEditor();
  } else {
    show("runs");
    loadRuns();
  }
}

// ---- runs ---------------------------------------------------------------

async function loadRuns() {
  let runs;
  try {
    runs = await api("api/runs");
  } catch (e) {
    return;
  }
  const body = $("runs-body");
  body.replaceChildren();
  $("runs-empty").hidden = runs.length > 0;
  for (const r of runs) {
    let status = r.status;
    if (r.pending_approval) status += " (approval pending)";
    const tr = el("tr", { "data-run": r.id, "data-session": r.session },
      el("td", {}, r.session), el("td", {}, r.workflow), el("td", { class: "state" }, r.state),
      el("td", {}, status), el("td", {}, r.iterations), el("td", {}, clock(r.updated_at)));
    tr.addEventListener("click", () => { location.hash = "#/run/" + encodeURIComponent(r.id); });
    body.append(tr);
  }
}

// The event log's verdict (statewright verify): on sign-in and on request,
// since it reads the whole log.
async function loadVerdict() {
  const out = $("log-verdict");
  out.textContent = "verifying…";
  try {
    const v = await api("api/verify");
    out.textContent = v.verdict;
    out.className = v.ok ? "" : "error";
  } catch (e) {
    out.textContent = "could not verify: " + e.message;
    out.className = "error";
  }
}

// ---- one run ------------------------------------------------------------

function filterQuery() {
  const p = new URLSearchParams();
  const kind = $("f-kind").value;
  if (kind) p.set("kind", kind);
  if ($("f-decision").value) p.set("decision", $("f-decision").value);
  if ($("f-tool").value.trim()) p.set("tool", $("f-tool").value.trim());
  if ($("f-q").value.trim()) p.set("q", $("f-q").value.trim());
  p.set("limit", "300");
  return p.toString();
}

async function loadRun(id, quiet) {
  let v, log, hist;
  try {
    [v, log, hist] = await Promise.all([
      api("api/runs/" + encodeURIComponent(id)),
      api("api/runs/" + encodeURIComponent(id) + "/events?" + filterQuery()),
      api("api/runs/" + encodeURIComponent(id) + "/events?kind=transition,approval,run,admin&limit=100"),
    ]);
  } catch (e) {
    $("action-result").textContent = e.message;
    return;
  }
  const r = v.run;
  currentRun = r;
  $("run-session").textContent = r.session;
  $("run-workflow").textContent = r.workflow + " (" + r.id + ")";
  $("run-state").textContent = r.state;
  $("run-status").textContent = r.status;
  $("run-iter").textContent = r.iterations + (v.max_iterations ? "/" + v.max_iterations : "");
  $("graph").innerHTML = v.svg; // rendered by the server from the run's snapshot; names are escaped there
  $("phase-name").textContent = r.state;
  $("phase-tools").textContent = v.is_final ? "none (final state)" : v.allowed_tools == null ? "any tool" : (v.allowed_tools.join(", ") || "none");
  $("phase-next").textContent = (v.next_events || []).join("; ") || "—";
  $("phase-instructions").textContent = v.instructions || "";
  const stack = v.stack || [];
  $("stack").hidden = stack.length === 0;
  $("stack-workflow").textContent = v.workflow_in_force + " (depth " + stack.length + ")";
  $("stack-list").replaceChildren(...stack.map((line) => { const li = document.createElement("li"); li.textContent = line; return li; }));

  const ap = r.pending_approval;
  $("approval").hidden = !ap;
  if (ap) {
    $("approval-id").textContent = ap.id;
    $("approval-text").textContent = `${ap.from} → ${ap.to} (event ${ap.event}): ${ap.message} · expires ${new Date(ap.expires_at).toLocaleString()}`;
    for (const b of [$("approve"), $("reject")]) {
      b.dataset.approvalId = ap.id;
      b.disabled = role !== "operator";
    }
    $("approval-note").textContent = role === "operator" ? "" : "signed in with an agent token: only an operator token approves";
  }
  if (!quiet) $("action-result").textContent = "";

  const hl = $("history");
  hl.replaceChildren();
  for (const e of hist) hl.append(el("li", {}, clock(e.time) + " " + e.text));

  const lb = $("log-body");
  lb.replaceChildren();
  for (const e of log.slice().reverse()) {
    const why = e.kind === "decision" ? `${e.rule}: ${e.reason || ""}` : e.text;
    lb.append(el("tr", { "data-kind": e.kind, "data-decision": e.decision || "" },
      el("td", {}, e.seq), el("td", {}, clock(e.time)), el("td", {}, e.kind), el("td", {}, e.state || ""),
      el("td", {}, e.tool || ""), el("td", { class: e.decision ? "d-" + e.decision : "" }, e.decision || ""), el("td", {}, why)));
  }
}

async function decide(approve) {
  const b = approve ? $("approve") : $("reject");
  const id = b.dataset.approvalId;
  if (!currentRun || !id) return;
  // Approving moves a governed agent on: ask, as the CLI and the TUI do.
  const what = `${approve ? "Approve" : "Reject"} ${id} for ${currentRun.session || currentRun.id}?`;
  if (!window.confirm(what)) {
    $("action-result").className = "";
    $("action-result").textContent = "not confirmed; nothing changed";
    return;
  }
  b.disabled = true;
  try {
    const res = await api(`api/runs/${encodeURIComponent(currentRun.id)}/${approve ? "approve" : "reject"}`,
      { body: { approval_id: id } });
    $("action-result").className = "ok";
    $("action-result").textContent = approve ? `approved ${id}: ${res.from} → ${res.to}` : `rejected ${id}`;
  } catch (e) {
    $("action-result").className = "error";
    $("action-result").textContent = e.message;
  }
  loadRun(currentRun.id, true);
}

// ---- editor -------------------------------------------------------------

const starter = `id: my-flow
initial: planning
states:
  planning:
    allowed_tools: [Read, Grep, Glob]
    instructions: Read the code and plan.
    on: { PLANNED: implementing }
  implementing:
    allowed_tools: [Read, Edit, Write, Bash]
    on:
      SHIP: { target: done, requires_approval: true }
  done: { type: final }
`;

let editorReady = false;
let validateTimer = null;
let validateSeq = 0;

async function initEditor() {
  if (editorReady) return;
  editorReady = true;
  const src = $("source");
  if (!src.value) src.value = starter;
  src.addEventListener("input", () => { gutter(); clearTimeout(validateTimer); validateTimer = setTimeout(validate, 200); });
  src.addEventListener("scroll", () => { $("gutter").scrollTop = src.scrollTop; });
  try {
    const names = await api("api/templates");
    for (const n of names) $("tpl").append(el("option", { value: n }, n));
  } catch (e) { /* the editor works without templates */ }
  $("tpl").addEventListener("change", async () => {
    const n = $("tpl").value;
    if (!n) return;
    src.value = await api("api/templates/" + encodeURIComponent(n));
    gutter();
    validate();
  });
  gutter();
  validate();
}

let badLines = new Set();
function gutter() {
  const n = $("source").value.split("\n").length;
  const g = $("gutter");
  g.replaceChildren();
  for (let i = 1; i <= n; i++) {
    g.append(el("span", { class: badLines.has(i) ? "bad" : "", "data-line": String(i) }, String(i)), "\n");
  }
  g.scrollTop = $("source").scrollTop;
}

async function validate() {
  const seq = ++validateSeq;
  let res;
  try {
    res = await api("api/validate", { body: { source: $("source").value } });
  } catch (e) {
    $("verdict").textContent = e.message;
    return;
  }
  if (seq !== validateSeq) return; // a newer keystroke's answer wins
  const errors = res.diagnostics.filter((d) => d.severity === "error");
  const warnings = res.diagnostics.length - errors.length;
  $("verdict").className = res.valid ? "ok" : "error";
  $("verdict").textContent = res.valid
    ? `valid: ${res.states} states${warnings ? `, ${warnings} warning(s)` : ""}`
    : `${errors.length} error(s)${warnings ? `, ${warnings} warning(s)` : ""}`;
  const ul = $("diagnostics");
  ul.replaceChildren();
  badLines = new Set();
  for (const d of res.diagnostics) {
    const pos = d.line ? `${d.line}:${d.col}` : "";
    if (d.severity === "error" && d.line) badLines.add(d.line);
    const li = el("li", { class: d.severity, "data-line": String(d.line || 0), "data-code": d.code },
      `${pos}${pos ? " " : ""}${d.severity}: ${d.message} [${d.code}]`);
    li.addEventListener("click", () => goToLine(d.line, d.col));
    ul.append(li);
  }
  gutter();
  if (res.svg) $("preview").innerHTML = res.svg;
  else if (!$("preview").innerHTML) $("preview").textContent = "(no preview: the workflow does not parse)";
}

function goToLine(line, col) {
  if (!line) return;
  const src = $("source");
  const lines = src.value.split("\n");
  let off = 0;
  for (let i = 0; i < line - 1 && i < lines.length; i++) off += lines[i].length + 1;
  off += Math.max((col || 1) - 1, 0);
  src.focus();
  src.setSelectionRange(off, off);
}

// ---- start --------------------------------------------------------------

async function start() {
  $("login-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    $("login-error").textContent = "";
    try {
      const s = await api("api/login", { body: { token: $("token").value } });
      $("token").value = "";
      signedIn(s);
    } catch (e) {
      $("login-error").textContent = e.message;
    }
  });
  $("approve").addEventListener("click", () => decide(true));
  $("reject").addEventListener("click", () => decide(false));
  for (const id of ["f-kind", "f-decision"]) $(id).addEventListener("change", refresh);
  for (const id of ["f-tool", "f-q"]) $(id).addEventListener("input", () => { clearTimeout(refreshTimer); refreshTimer = setTimeout(refresh, 200); });
  $("filters").addEventListener("submit", (ev) => ev.preventDefault());
  window.addEventListener("hashchange", route);
  try {
    signedIn(await api("api/session"));
  } catch (e) {
    showLogin();
  }
}

function signedIn(s) {
  csrf = s.csrf || "";
  role = s.role;
  $("who").textContent = (s.name ? s.name + " · " : "") + s.role;
  document.body.dataset.role = s.role;
  connect();
  route();
  loadVerdict();
}

$("verify-now").addEventListener("click", loadVerdict);
start();
