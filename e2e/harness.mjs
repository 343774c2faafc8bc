// What the browser and client tests share: their settings from the
// environment, their assertion, and the offline Chromium they drive.
import { chromium } from 'playwright-core';

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
