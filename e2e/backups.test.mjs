// Browser test of the playground's Backups and Health pages, offline
// (Debian's chromium driven by playwright-core; any request leaving the
// test server, script error or Content-Security-Policy violation fails it).
// An admin signs in, finds no backups, makes one with Make a backup, sees
// it listed and downloads it with Download: the file the browser saves is
// written to OUTPUT_DIR/backup-download.db, which the Go test opens as an
// SQLite database. On the Health page the admin sees the version, uptime
// and database, and the request-rate chart drawn from two reads of
// /metrics. A user (Alice) sees neither page's button. The page's icon is
// the server's /favicon.ico.
//
// Started by e2e/backups_test.go, which passes BASE_URL, API_KEY (the
// admin's), USER_API_KEY (Alice's), OUTPUT_DIR; CHROMIUM overrides
// /usr/bin/chromium. Screenshots: admin-backups.png, admin-health.png.
import fs from 'node:fs';
import path from 'node:path';
import { required, check, launchChromium, outDir, shot } from './harness.mjs';

const base = required('BASE_URL');
const adminKey = required('API_KEY');
const aliceKey = required('USER_API_KEY');
const timeout = 15_000;

const browser = await launchChromium();
const outside = [];
const problems = [];
const notFound = []; // same-origin requests answered 404 (a missing favicon was one on every load)
const pages = [];
let failed = false;

async function newPage(name) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, acceptDownloads: true });
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) return route.continue();
    outside.push(`${name}: ${route.request().resourceType()} ${url.href}`);
    return route.abort('internetdisconnected');
  });
  const page = await context.newPage();
  page.on('pageerror', (e) => problems.push(`${name}: page error: ${e.stack}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) problems.push(`${name}: CSP: ${m.text()}`);
  });
  page.on('response', (r) => { if (r.status() === 404) notFound.push(`${name}: ${r.url()}`); });
  pages.push([name, page]);
  return page;
}

async function signIn(page, key) {
  await page.goto(`${base}/playground`);
  await page.locator('#signin').waitFor({ timeout });
  await page.locator('#api-key').fill(key);
  await page.locator('#signin button[type=submit]').click();
  await page.locator('#session').waitFor({ timeout });
}

const view = (page, name) => page.locator('nav.views').getByRole('button', { name, exact: true });

try {
  const admin = await newPage('admin');
  await signIn(admin, adminKey);
  // The icon the page names (headless chromium does not fetch it itself).
  const iconHref = await admin.locator('link[rel=icon]').getAttribute('href');
  const icon = await admin.request.get(new URL(iconHref, base).href);
  check(iconHref === '/favicon.ico' && icon.status() === 200 && icon.headers()['content-type'] === 'image/x-icon',
    `${iconHref}: HTTP ${icon.status()} ${icon.headers()['content-type']}`);

  // ---- Backups: none yet, make one, download it.
  await view(admin, 'Backups').click();
  await admin.getByText('No backups yet.').waitFor({ timeout });
  await admin.getByRole('button', { name: 'Make a backup', exact: true }).click();
  const row = admin.locator('#backups-rows tr').first();
  await row.waitFor({ timeout });
  const name = await row.getAttribute('data-name');
  check(/^backup-\d{8}T\d{6}\.\d{3}Z\.db$/.test(name), `the new backup's name: ${name}`);
  await admin.getByText(`Made ${name}`).waitFor({ timeout });
  console.log(`backups: made ${name}`);

  const [download] = await Promise.all([
    admin.waitForEvent('download', { timeout }),
    admin.getByRole('button', { name: `Download ${name}`, exact: true }).click(),
  ]);
  check(download.suggestedFilename() === name, `the download is named ${download.suggestedFilename()}, want ${name}`);
  fs.mkdirSync(outDir, { recursive: true });
  const saved = path.join(outDir, 'backup-download.db');
  await download.saveAs(saved);
  await admin.getByText(`Downloaded ${name}`).waitFor({ timeout });
  console.log(`backups: downloaded ${name} to ${saved} (${fs.statSync(saved).size} bytes)`);
  await shot(admin, 'admin-backups.png');

  // ---- Health: facts, and the charts after two reads of /metrics.
  await view(admin, 'Health').click();
  await admin.locator('#health-version').getByText(/built with go\d/).waitFor({ timeout });
  await admin.locator('#health-database').getByText(/^SQLite, ready/).waitFor({ timeout });
  check(!/…|—/.test(await admin.locator('#health-uptime').innerText()), 'no uptime');
  // The rate is the increase between two reads, 5 s apart.
  await admin.locator('#health-rate svg polyline[points*=","]').waitFor({ timeout });
  const rate = await admin.locator('#health-rate .value').innerText();
  check(/^\d+(\.\d+)?\/s$/.test(rate), `the request rate reads "${rate}"`);
  for (const id of ['health-errors', 'health-p99', 'health-backlog']) {
    await admin.locator(`#${id} svg`).waitFor({ timeout });
  }
  console.log(`health: ${await admin.locator('.facts').innerText()}; requests ${rate}, p99 ${await admin.locator('#health-p99 .value').innerText()}`);
  await shot(admin, 'admin-health.png');

  // ---- A user sees neither page.
  const alice = await newPage('alice');
  await signIn(alice, aliceKey);
  await view(alice, 'Keys').waitFor({ timeout });
  check(await view(alice, 'Backups').isHidden() && await view(alice, 'Health').isHidden(), 'a user sees Backups or Health');

  check(outside.length === 0, `the pages tried to leave the server:\n  ${outside.join('\n  ')}`);
  check(problems.length === 0, `the pages had errors:\n  ${problems.join('\n  ')}`);
  check(notFound.length === 0, `the pages asked for what is not there:\n  ${notFound.join('\n  ')}`);
  console.log('no request left the server or was a 404; no script error or CSP violation');
} catch (e) {
  failed = true;
  console.error(e);
  if (outside.length) console.error(`requests that tried to leave the server:\n  ${outside.join('\n  ')}`);
  if (problems.length) console.error(problems.join('\n'));
  for (const [name, page] of pages) {
    await shot(page, `backups-failed-${name}.png`).catch(() => {});
  }
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
