// The web console in a real browser (tests/web/run.sh sets the environment):
// Playwright drives Debian's Chromium, headless, against a live local
// deployment. (1) A stack's page shows its graph turning green as it
// converges; (2) the cluster map shows a killed node going down and its
// replicas moving to other nodes; (3) a console with a bearer token works
// once opened with ?token=. Screenshots go to $ARTIFACTS, and the two
// the README shows to $IMAGES when it is set. Every wait has a deadline.
import { chromium } from "playwright-core";
import { execFileSync, spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = join(HERE, "..", "..");
const env = (name) => {
  if (!process.env[name]) throw new Error(`${name} is not set (run tests/web/run.sh)`);
  return process.env[name];
};
const WEB = env("CONVERGE_WEB_URL");
const CTL = env("CONVERGECTL");
const STATE = env("STATE");
const BUILD = env("BUILD_DIR");
const ARTIFACTS = env("ARTIFACTS");
const IMAGES = process.env.IMAGES || "";
const RUN_ID = process.env.RUN_ID || String(Date.now());
mkdirSync(ARTIFACTS, { recursive: true });

const ctl = (...args) => execFileSync(CTL, args, { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
const log = (msg) => console.log(`  ${msg}`);

async function waitFor(page, what, fn, arg, seconds) {
  try {
    return await page.waitForFunction(fn, arg, { timeout: seconds * 1000, polling: 100 });
  } catch (e) {
    await page.screenshot({ path: join(ARTIFACTS, `failed-${Date.now()}.png`), fullPage: true });
    throw new Error(`gave up after ${seconds}s waiting for ${what}`);
  }
}

async function shot(page, name, readme) {
  const path = join(ARTIFACTS, name);
  await page.screenshot({ path, fullPage: true });
  if (readme && IMAGES) copyFileSync(path, join(IMAGES, readme));
  log(`screenshot ${path}${readme && IMAGES ? ` (and ${join(IMAGES, readme)})` : ""}`);
}

/* (1) The stack page: the SVG graph's nodes go from not green to all green. */
async function stackGraphTurnsGreen(page) {
  const name = `web-${RUN_ID}-graph`;
  ctl("submit", name, join(HERE, "graph.yaml"));
  const t0 = Date.now();
  await page.goto(`${WEB}/#/stack/${name}`);
  const states = () => [...document.querySelectorAll("#graph-svg g.node")].map((g) => g.dataset.state);
  await waitFor(page, "the graph's 7 nodes, some not complete yet",
    (fn) => { const s = eval(fn)(); return s.length === 7 && s.some((x) => x !== "complete"); },
    `(${states})`, 10);
  await waitFor(page, "a node in progress",
    (fn) => eval(fn)().includes("in_progress"), `(${states})`, 15);
  await waitFor(page, "the panel saying what the stack waits on",
    () => /Waiting/.test(document.querySelector("#s-waiting")?.textContent || ""), null, 10);
  await shot(page, "stack-converging.png");
  const seen = await page.evaluate(`(${states})()`);
  log(`converging: ${seen.join(" ")}`);
  await waitFor(page, "every node of the graph to turn complete (or one to fail)",
    (fn) => { const s = eval(fn)(); return s.includes("failed") || (s.length === 7 && s.every((x) => x === "complete")); },
    `(${states})`, 60);
  const end = await page.evaluate(`(${states})()`);
  if (end.includes("failed")) throw new Error(`a resource failed: ${end.join(" ")} (${ctl("status", name)})`);
  log(`all 7 nodes green ${((Date.now() - t0) / 1000).toFixed(1)} s after submit`);
  const fills = await page.evaluate(() =>
    [...document.querySelectorAll("#graph-svg g.node rect")].map((r) => r.getAttribute("fill")));
  if (fills.some((f) => f !== "#3cb371")) throw new Error(`not every node is green: ${fills}`);
  const edges = await page.locator("#graph-svg path.edge").count();
  if (edges !== 7) throw new Error(`expected 7 edges (graph.yaml's dependencies), got ${edges}`);
  await waitFor(page, "the status CREATE_COMPLETE in the header",
    () => document.querySelector("#s-status")?.textContent === "CREATE_COMPLETE", null, 10);
  await waitFor(page, "the output url",
    () => /http:\/\//.test(document.querySelector("#s-outputs")?.textContent || ""), null, 10);
  await waitFor(page, "the stack's last event in the events table",
    () => /Stack CREATE completed/.test(document.querySelector("#s-events")?.textContent || ""), null, 10);
  await shot(page, "stack.png", "console-stack.png");
  await page.goto(`${WEB}/#/stacks`);
  await waitFor(page, "the stack in the list",
    (n) => !!document.querySelector(`tr[data-stack="${n}"]`), name, 10);
  await shot(page, "stacks.png");
  return name;
}

/* (2) The cluster map: a node killed goes down, its replicas move. */
async function clusterMapShowsNodeLoss(page, program) {
  const name = `web-${RUN_ID}-svc`;
  ctl("submit", name, join(REPO, "examples", "web.yaml"), "-P", `program=${program}`, "-P", "replicas=3",
    "--wait", "--timeout", "120");
  await page.goto(`${WEB}/#/cluster`);
  const placed = (stack) => {
    const out = {};
    document.querySelectorAll(".nodecard").forEach((card) => {
      out[card.dataset.node] = {
        status: card.dataset.status,
        replicas: [...card.querySelectorAll("li[data-replica]")].map((li) => li.dataset.replica)
          .filter((r) => r.endsWith(`.${stack}`)),
      };
    });
    return out;
  };
  const count = (p) => Object.values(p).reduce((n, c) => n + c.replicas.length, 0);
  await waitFor(page, "3 replicas on the map",
    ([fn, stack]) => Object.values(eval(fn)(stack)).reduce((n, c) => n + c.replicas.length, 0) === 3,
    [`(${placed})`, name], 30);
  const before = await page.evaluate(([fn, stack]) => eval(fn)(stack), [`(${placed})`, name]);
  const lost = Object.keys(before).find((n) => before[n].replicas.length > 0);
  const moving = before[lost].replicas;
  log(`before: ${JSON.stringify(before)}; losing ${lost} (${moving.join(", ")})`);
  await shot(page, "cluster-before.png");
  const t0 = Date.now();
  execFileSync(join(HERE, "node_loss.sh"), [STATE, BUILD, "kill", lost], { stdio: "inherit" });
  try {
    await waitFor(page, `${lost} shown down`,
      (n) => document.querySelector(`.nodecard[data-node="${n}"]`)?.dataset.status === "down", lost, 60);
    log(`${lost} shown down ${((Date.now() - t0) / 1000).toFixed(1)} s after the kill`);
    await waitFor(page, `the replicas of ${lost} on other nodes that are up`,
      ([fn, stack, node]) => {
        const p = eval(fn)(stack);
        const elsewhere = Object.entries(p).filter(([n, c]) => n !== node && c.status === "up")
          .reduce((k, [, c]) => k + c.replicas.length, 0);
        return p[node].status === "down" && p[node].replicas.length === 0 && elsewhere === 3;
      }, [`(${placed})`, name, lost], 90);
    const after = await page.evaluate(([fn, stack]) => eval(fn)(stack), [`(${placed})`, name]);
    log(`replicas moved ${((Date.now() - t0) / 1000).toFixed(1)} s after the kill: ${JSON.stringify(after)}`);
    if (count(after) !== 3) throw new Error(`expected 3 replicas after the move, got ${count(after)}`);
    await shot(page, "cluster.png", "console-cluster.png");
    await page.goto(`${WEB}/#/service/${name}/web`);
    await waitFor(page, "the service page's 3 replicas and the placement explained",
      () => document.querySelectorAll("#v-body table")[0]?.querySelectorAll("tr").length === 4 &&
        document.querySelectorAll("#v-body table")[1]?.querySelectorAll("tr").length === 4, null, 20);
    await shot(page, "service.png");
  } finally {
    execFileSync(join(HERE, "node_loss.sh"), [STATE, BUILD, "restore", lost], { stdio: "inherit" });
  }
  return name;
}

/* A console with a bearer token: the page opened once with ?token= loads its
   script and style sheet and lists the stacks; without the token it cannot. */
async function tokenProtectedConsole(page, stack) {
  const dir = mkdtempSync(join(tmpdir(), "cv-webtok-"));
  const token = `tok-${RUN_ID}`;
  writeFileSync(join(dir, "token"), `${token}\n`);
  const web = spawn(join(BUILD, "converge-web"), ["--listen", "127.0.0.1:0", "--token-file", join(dir, "token")],
    { stdio: ["ignore", "pipe", "inherit"] });
  try {
    const url = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("converge-web --token-file did not listen in 10 s")), 10000);
      let out = "";
      web.stdout.on("data", (d) => {
        out += d;
        const m = /^listening on (\S+)$/m.exec(out);
        if (m) { clearTimeout(timer); resolve(`http://${m[1]}`); }
      });
      web.on("exit", (code) => reject(new Error(`converge-web exited with status ${code}`)));
    });
    const denied = await page.goto(`${url}/`);
    if (denied.status() !== 401) throw new Error(`without the token: status ${denied.status()}, expected 401`);
    await page.goto(`${url}/?token=${token}#/stacks`);
    await waitFor(page, "the stack list behind the token",
      (n) => !!document.querySelector(`tr[data-stack="${n}"]`), stack, 15);
    await shot(page, "stacks-token.png");
  } finally {
    web.kill("SIGTERM");
    rmSync(dir, { recursive: true, force: true });
  }
}

async function deadLettersPage(page) {
  await page.goto(`${WEB}/#/dead`);
  await waitFor(page, "the dead letters page to load",
    () => !/Reading/.test(document.querySelector("#d-body")?.textContent || "Reading"), null, 30);
  const err = await page.locator("#d-body .error").count();
  if (err) throw new Error(`dead letters page: ${await page.locator("#d-body").textContent()}`);
  await shot(page, "dead.png");
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox"],
});
const stacks = [];
let failed = false;
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on("pageerror", (e) => { failed = true; console.error(`  page error: ${e.message}`); });
  for (const [title, run] of [
    ["stack graph turns green", async () => stacks.push(await stackGraphTurnsGreen(page))],
    ["cluster map shows a node lost", async () => stacks.push(await clusterMapShowsNodeLoss(page, join(BUILD, "converge-hello")))],
    ["a console with a bearer token", async () => tokenProtectedConsole(page, stacks[0])],
    ["dead letters page", async () => deadLettersPage(page)],
  ]) {
    console.log(`browser: ${title}`);
    await run();
  }
  if (failed) throw new Error("the page threw (see above)");
  console.log("browser: all passed");
} catch (e) {
  console.error(`browser: FAILED: ${e.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
  for (const name of stacks) {
    try { ctl("delete", name, "--wait", "--timeout", "60"); } catch { /* reported by convergectl */ }
  }
}
