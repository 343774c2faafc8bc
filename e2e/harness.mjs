// What the browser and client tests share: their settings from the
// environment, their assertion, the offline Chromium they drive, and where
// their screenshots go.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

// outDir is where the tests write screenshots and a failed page's HTML:
// $OUTPUT_DIR, else test-output at the repository's root.
export const outDir = process.env.OUTPUT_DIR || path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'test-output');

// shot saves a screenshot of page as name in outDir and says where.
export async function shot(page, name) {
  fs.mkdirSync(outDir, { recursive: true });
  const file = path.join(outDir, name);
  await page.screenshot({ path: file });
  console.log(`screenshot: ${file}`);
}

// required returns the environment variable name, or ends the test run
// (exit 2) when the Go test that starts it did not set it.
export function required(name) {
  const v = process.env[name];
  if (!v) {
    console.error(`${name} is not set`);
    process.exit(2);
  }
  return v;
}

// check fails the test with what when ok is false.
export function check(ok, what) {
  if (!ok) throw new Error(what);
}

// launchChromium starts Debian's Chromium ($CHROMIUM overrides it)
// headless, with nothing of its own that reaches the network.
export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-background-networking'],
  });
}
