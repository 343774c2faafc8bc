// Browser test of the GraphiQL playground. Debian's chromium, driven by
// playwright-core (no browser download), opens /playground of a running
// server, pastes an access token into the headers editor, runs a query and
// waits for the seeded items in the result; it saves a screenshot.
//
// Started by e2e/playground_test.go (make e2e), which runs the server and
// passes: BASE_URL, TOKEN, EXPECT (comma-separated item names that must
// show), OUTPUT_DIR. CHROMIUM overrides /usr/bin/chromium.
//
// The page loads GraphiQL and React from a CDN, with integrity hashes. The
// test machine has no general internet access, so those requests are served
// from this folder's node_modules, which pin the very versions the page
// asks for (a mismatch fails here, and SRI would refuse different bytes).
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const base = required('BASE_URL');
const token = required('TOKEN');
const expected = required('EXPECT').split(',');
const outDir = process.env.OUTPUT_DIR || path.join(here, '..', 'test-output');
const screenshot = path.join(outDir, 'playground.png');

function required(name) {
  const v = process.env[name];
  if (!v) {
    console.error(`${name} is not set`);
    process.exit(2);
  }
  return v;
}

// cdnFile maps https://cdn.jsdelivr.net/npm/<pkg>@<version>/<file> to the
// installed package, checking that the installed version is the one asked.
function cdnFile(url) {
  const m = new URL(url).pathname.match(/^\/npm\/((?:@[^/]+\/)?[^@/]+)@([^/]+)\/(.+)$/);
  if (!m) return { error: `unexpected CDN URL ${url}` };
  const [, pkg, version, file] = m;
  const dir = path.join(here, 'node_modules', pkg);
  let installed;
  try {
    installed = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).version;
  } catch {
    return { error: `${pkg} is not installed: add ${pkg}@${version} to e2e/package.json` };
  }
  if (installed !== version) {
    return { error: `the playground asks for ${pkg}@${version}, e2e/package.json pins ${installed}` };
  }
  return { file: path.join(dir, file) };
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-background-networking'],
});
let failed = false;
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
try {
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  await page.route('https://cdn.jsdelivr.net/**', async (route) => {
    const { file, error } = cdnFile(route.request().url());
    if (error) {
      problems.push(error);
      return route.abort();
    }
    const type = file.endsWith('.css') ? 'text/css' : 'application/javascript';
    return route.fulfill({ path: file, contentType: type, headers: { 'access-control-allow-origin': '*' } });
  });

  await page.goto(`${base}/playground`);
  await page.locator('.graphiql-container').waitFor({ timeout: 15_000 });

  // Paste the token into the headers editor, as an admin would.
  await page.locator('.graphiql-editor-tools button[data-name="headers"]').click();
  await replaceEditor(page, 'section.graphiql-editor-tool .CodeMirror >> visible=true', JSON.stringify({ Authorization: `Bearer ${token}` }, null, 2));

  // Browse items and users.
  const query = `query Browse {
  me { email role }
  items(first: 10, orderBy: {field: NAME}) {
    totalCount
    edges { node { id name status owner { email } } }
  }
  users { totalCount edges { node { email role } } }
}`;
  await replaceEditor(page, '.graphiql-query-editor .CodeMirror', query);
  await page.locator('.graphiql-execute-button').click();

  const result = page.locator('.graphiql-response');
  for (const name of expected) {
    await result.getByText(name).first().waitFor({ timeout: 15_000 });
  }
  const text = await result.innerText();
  if (text.includes('"errors"')) throw new Error(`the query failed:\n${text}`);
  console.log(`the playground shows ${expected.length} items: ${expected.join(', ')}`);
  if (problems.length) console.log(problems.join('\n'));
  fs.mkdirSync(outDir, { recursive: true });
  await page.screenshot({ path: screenshot, fullPage: true });
  console.log(`screenshot: ${screenshot}`);
} catch (e) {
  failed = true;
  console.error(e);
  // What the page looked like when it failed, for whoever reads the CI log.
  fs.mkdirSync(outDir, { recursive: true });
  await page.screenshot({ path: path.join(outDir, 'playground-failed.png'), fullPage: true }).catch(() => {});
  fs.writeFileSync(path.join(outDir, 'playground-failed.html'), await page.content().catch(() => ''));
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);

// replaceEditor focuses a GraphiQL editor, selects all and types text in
// one input event (so the editor's bracket auto-closing does not double it).
async function replaceEditor(page, selector, text) {
  const editor = page.locator(selector).first();
  await editor.click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
}
