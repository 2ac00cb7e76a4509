/// <reference lib="dom" />
/**
 * Test helper: loads one report page (`cargo agents report`) in headless Chromium (Debian's
 * `/usr/bin/chromium`, driven by playwright-core in a process of its own: playwright reads `/proc` paths
 * that Deno grants only with `-A`) and prints one JSON line of what the page did and shows:
 *
 * `{ requests, consoleErrors, scripts, images, fields, bars, scriptTexts, title }`: every request the page
 * made besides loading itself (each aborted: the page may load nothing), console errors and uncaught
 * errors (a CSP violation is one), how many script and img elements its DOM has, each `[data-k]` element's
 * text with the id of the execute it is in (`null` for the session's), each timeline bar's start and
 * duration, and each script text as shown.
 *
 * Usage: `deno run -A report_page_driver.ts <page.html> <screenshot.png>`
 */
import { chromium } from "playwright-core";

const [pagePath, screenshotPath] = Deno.args;
if (pagePath === undefined || screenshotPath === undefined) {
  throw new TypeError("usage: report_page_driver.ts <page.html> <screenshot.png>");
}
const pageUrl = new URL(`file://${pagePath}`).href;
const browser = await chromium.launch({
  executablePath: Deno.env.get("CHROMIUM_PATH") ?? "/usr/bin/chromium",
  args: [
    "--no-sandbox",
    "--headless",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--no-proxy-server",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
  ],
});
try {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const requests: string[] = [];
  const consoleErrors: string[] = [];
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (url === pageUrl) return route.continue();
    requests.push(url);
    return route.abort();
  });
  const page = await context.newPage();
  page.on("request", (request) => {
    if (request.url() !== pageUrl && !requests.includes(request.url())) requests.push(request.url());
  });
  page.on("console", (message) => {
    if (message.type() === "error") consoleErrors.push(message.text());
  });
  page.on("pageerror", (error) => consoleErrors.push(String(error)));
  await page.goto(pageUrl, { waitUntil: "load" });
  const shown = await page.evaluate(() => ({
    title: document.title,
    scripts: document.querySelectorAll("script").length,
    images: document.querySelectorAll("img").length,
    fields: [...document.querySelectorAll("[data-k]")].map((el) => ({
      k: el.getAttribute("data-k"),
      text: el.textContent,
      execute: el.closest("section.execute")?.getAttribute("data-id") ?? null,
    })),
    bars: [...document.querySelectorAll(".bar")].map((el) => ({
      execute: el.closest("section.execute")?.getAttribute("data-id") ?? null,
      start: Number(el.getAttribute("data-start")),
      ms: Number(el.getAttribute("data-ms")),
      left: (el as HTMLElement).getBoundingClientRect().left,
      right: (el as HTMLElement).getBoundingClientRect().right,
    })),
    scriptTexts: [...document.querySelectorAll('pre[data-k="script"]')].map((el) => el.textContent),
  }));
  await page.screenshot({ path: screenshotPath, fullPage: true });
  console.log(JSON.stringify({ ...shown, requests, consoleErrors }));
} finally {
  await browser.close();
}
