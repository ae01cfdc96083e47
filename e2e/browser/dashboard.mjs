// Drives the statewright dashboard in Debian's chromium with playwright-core.
// Run by e2e/dashboard_browser_test.go (build tag e2e), which starts the real
// `statewright dashboard`, and asserts the store afterwards. Environment:
//
//   PLAYWRIGHT_CORE  the playwright-core package directory (scripts/install-browser.sh)
//   CHROMIUM         the browser binary (/usr/bin/chromium)
//   SW_URL           the dashboard's URL
//   SW_TOKEN         the operator token
//   SW_BIN, SW_STORE, SW_SESSION, SW_CONFIG
//                    the statewright binary, the store, the session id and the
//                    XDG_CONFIG_HOME the CLI runs with (for transitions made by
//                    another process, as the agent's hooks would)
//   ARTIFACT_DIR     where screenshots go
//
// Prints one JSON line {"ok":true,"screenshots":[...]} and exits 0, or prints
// the failure, saves failure.png and exits 1.
import { createRequire } from "node:module";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`dashboard.mjs: $${k} is not set`);
  return v;
};
const require = createRequire(import.meta.url);
const { chromium } = require(env("PLAYWRIGHT_CORE"));

const url = env("SW_URL");
const artifacts = env("ARTIFACT_DIR");
const session = env("SW_SESSION");
const key = "claude-code:" + session;
const shots = [];

function cli(...args) {
  return execFileSync(env("SW_BIN"), [...args, "--store", env("SW_STORE")], {
    env: { ...process.env, XDG_CONFIG_HOME: env("SW_CONFIG") },
    encoding: "utf8",
  });
}

function check(cond, msg) {
  if (!cond) throw new Error("assertion failed: " + msg);
}

async function shot(page, name) {
  const p = path.join(artifacts, name);
  await page.screenshot({ path: p, fullPage: true });
  shots.push(p);
}

const brokenWorkflow = [
  "id: broken",
  "initial: planning",
  "states:",
  "  planning:",
  "    allowed_tools: [Read]",
  "    on: { PLANNED: implemnting }",
  "  implementing:",
  "    on: { DONE: done }",
  "  done: { type: final }",
  "",
].join("\n");

const userDataDir = mkdtempSync(path.join(tmpdir(), "sw-chromium-"));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: env("CHROMIUM"),
  headless: true,
  viewport: { width: 1360, height: 900 },
  args: [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
  ],
});
const page = context.pages()[0] || (await context.newPage());
const consoleErrors = [];
// The test's own refused requests (401 before signing in, 403 without CSRF)
// log resource errors; anything else is a bug in the page.
page.on("console", (m) => {
  if (m.type() === "error" && !/Failed to load resource: the server responded with a status of 40[13]/.test(m.text())) {
    consoleErrors.push(m.text());
  }
});
page.on("pageerror", (e) => consoleErrors.push(String(e)));
page.setDefaultTimeout(20000);

try {
  // Not signed in: the API refuses, the page asks for a token.
  await page.goto(url);
  await page.locator("#login").waitFor({ state: "visible" });
  check((await page.textContent("#token-help")).includes("statewright tokens create --role operator"),
    "the sign-in says where a token comes from");
  const anon = await page.evaluate(async () => (await fetch("api/runs")).status);
  check(anon === 401, `api/runs without a session answered ${anon}, want 401`);

  // A wrong token is refused.
  await page.fill("#token", "not-the-token");
  await page.click("#login-form button");
  await page.locator("#login-error", { hasText: "invalid token" }).waitFor();

  // Sign in; the run is listed.
  await page.fill("#token", env("SW_TOKEN"));
  await page.click("#login-form button");
  const row = page.locator(`#runs-body tr[data-session="${key}"]`);
  await row.waitFor();
  // The event log's verdict, as `statewright verify` gives it.
  await page.locator("#log-verdict", { hasText: /^verified: \d+ events in \d+ chains/ }).waitFor();
  check((await row.locator("td.state").textContent()) === "planning", "the run list shows planning");

  // Approving without the page's CSRF token is refused, even signed in.
  const noCsrf = await page.evaluate(async () => {
    const runs = await (await fetch("api/runs")).json();
    const r = await fetch(`api/runs/${runs[0].id}/approve`, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ approval_id: "apr_x" }),
    });
    return r.status;
  });
  check(noCsrf === 403, `approve without CSRF answered ${noCsrf}, want 403`);

  // The run's page: graph with the current phase, decisions.
  await row.click();
  await page.locator('#graph svg .node.current[data-state="planning"]').waitFor();
  check((await page.textContent("#run-state")) === "planning", "state planning");
  await page.locator('#log-body tr[data-decision="deny"]').first().waitFor();
  // Filter the decision log to denials.
  await page.selectOption("#f-decision", "deny");
  await page.waitForFunction(() => {
    const rows = [...document.querySelectorAll("#log-body tr")];
    return rows.length > 0 && rows.every((r) => r.dataset.decision === "deny");
  });
  await page.selectOption("#f-decision", "");
  await page.locator('#log-body tr[data-decision="allow"]').first().waitFor();

  // Another process moves the run on: the page follows over SSE, no reload.
  cli("transition", session, "PLANNED");
  await page.locator('#graph svg .node.current[data-state="implementing"]').waitFor();
  await page.locator("#run-state", { hasText: "implementing" }).waitFor();
  await page.locator("#history li", { hasText: "planning → implementing (event PLANNED)" }).waitFor();

  // The agent asks to ship: the approval appears; the operator approves.
  const parked = cli("transition", session, "SHIP");
  check(parked.includes("awaiting approval"), "SHIP parks the run: " + parked);
  const id = parked.match(/apr_[0-9a-f]+/)[0];
  await page.locator("#approval").waitFor({ state: "visible" });
  check((await page.textContent("#approval-id")) === id, "the page shows approval " + id);
  check(await page.isEnabled("#approve"), "the approve button is enabled for an operator");
  check((await page.getAttribute("#approve", "data-approval-id")) === id, "approve is bound to " + id);
  await shot(page, "dashboard-approval.png");
  // Approve asks first, as the CLI and the TUI do: dismissed, nothing moves.
  let asked = "";
  page.once("dialog", (d) => { asked = d.message(); d.dismiss(); });
  await page.click("#approve");
  await page.locator("#action-result", { hasText: "not confirmed; nothing changed" }).waitFor();
  check(asked.includes(`Approve ${id}`), "approve asked for confirmation naming " + id + ": " + asked);
  check(cli("status", "--session", session).includes("awaiting_approval"), "a dismissed approval left the run parked");
  page.once("dialog", (d) => d.accept());
  await page.click("#approve");
  await page.locator("#action-result", { hasText: `approved ${id}: implementing → done` }).waitFor();
  await page.locator('#graph svg .node.current[data-state="done"]').waitFor();
  await page.locator("#run-status", { hasText: "completed" }).waitFor();
  await shot(page, "dashboard-run.png");

  // The editor: an invalid workflow shows its error at the right line:column.
  await page.goto(url + "#/editor");
  await page.locator("#verdict", { hasText: "valid: 3 states" }).waitFor();
  await page.fill("#source", brokenWorkflow);
  const err = page.locator('#diagnostics li.error[data-line="6"]', {
    hasText: "6:20 error: state 'planning' event 'PLANNED' targets nonexistent state 'implemnting'",
  });
  await err.waitFor();
  await page.locator('#gutter span.bad[data-line="6"]').waitFor();
  await page.locator('#preview svg .node.missing[data-state="implemnting"]').waitFor();
  await page.locator("#verdict", { hasText: "4 error(s)" }).waitFor();
  await shot(page, "dashboard-editor.png");
  // Fixing the typo makes it valid again, as you type.
  await page.fill("#source", brokenWorkflow.replace("implemnting", "implementing"));
  await page.locator("#verdict", { hasText: "valid: 3 states" }).waitFor();

  check(consoleErrors.length === 0, "console errors: " + consoleErrors.join(" | "));
  console.log(JSON.stringify({ ok: true, screenshots: shots }));
} catch (e) {
  try { await shot(page, "failure.png"); } catch {}
  console.log(JSON.stringify({ ok: false, error: String(e && e.stack || e), screenshots: shots, console: consoleErrors }));
  process.exitCode = 1;
} finally {
  await context.close();
  rmSync(userDataDir, { recursive: true, force: true });
}
