// Browser test of the server's pages, offline. Debian's chromium, driven by
// playwright-core (no browser download), may reach the test server and
// nothing else: any request to another host is aborted and fails the test,
// as does any Content-Security-Policy violation or script error. On
// /playground it signs in with an API key through the page's form (a bad
// key first; a refusal from before signing in leaves the results pane),
// runs the example tabs (ItemById, NodeById, UpdateItem and DeleteItem on
// the id filled in), sees the seeded items, opens the explorer plugin, signs out; it checks
// the messages for an expired token and for an unreachable server; then it
// reads /docs rendered by Redoc. It also watches the ItemEvents tab stream
// items created meanwhile through the REST API. In the browsing view it
// filters by an owner and by a status (a row of ItemWhereInput's
// predicates), edits and deletes an item in place, sees items
// created through REST appear live, and signs in as a user, who sees only
// their own items and no owner filter. Screenshots: playground-signed-in.png,
// playground-explorer.png, playground-live.png, playground-browse-conflict.png, playground-browse.png,
// playground-browse-live.png, playground-browse-user.png, docs.png, and
// playground-wrong-key.png, playground-unreachable.png.
//
// Started by e2e/playground_test.go (make e2e), which runs the server and
// passes: BASE_URL, API_KEY (the admin's), USER_API_KEY (Alice's, not an
// admin), EXPIRED_TOKEN (a signed token
// past its expiry), EXPECT (comma-separated item names that must show),
// OUTPUT_DIR. CHROMIUM overrides /usr/bin/chromium.
import fs from 'node:fs';
import path from 'node:path';
import { required, check, launchChromium, outDir, shot } from './harness.mjs';

const base = required('BASE_URL');
const apiKey = required('API_KEY');
const userKey = required('USER_API_KEY');
const expiredToken = required('EXPIRED_TOKEN');
const expected = required('EXPECT').split(',');
const timeout = 15_000;

const browser = await launchChromium();
const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
const outside = []; // requests that tried to leave the server
const problems = []; // script errors and CSP violations
let failed = false;

// Everything that is not the test server is the internet, which the pages
// must not need: abort it and remember it.
await context.route('**/*', (route) => {
  const url = new URL(route.request().url());
  if (['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) return route.continue();
  outside.push(`${route.request().resourceType()} ${url.href}`);
  return route.abort('internetdisconnected');
});
const page = await context.newPage();
page.on('pageerror', (e) => problems.push(`page error: ${e.stack}`));
// Redoc 2's sidebar footer always shows Redocly's logo from its CDN; the
// policy refuses it before any request is made, and Redoc then hides the
// image (its onError). That one refusal is expected; any other fails.
const expectedRefusals = [/'https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini\.svg'/];
page.on('console', (m) => {
  if (m.type() !== 'error' || !/Content Security Policy/i.test(m.text())) return;
  if (expectedRefusals.some((re) => re.test(m.text()))) return;
  problems.push(`CSP: ${m.text()}`);
});

const bar = {
  form: page.locator('#signin'),
  key: page.locator('#api-key'),
  session: page.locator('#session'),
  who: page.locator('#who'),
  message: page.locator('#message'),
};

try {
  // The playground: GraphiQL renders, the sign-in form shows.
  await page.goto(`${base}/playground`);
  await page.locator('.graphiql-container').waitFor({ timeout });
  await bar.form.waitFor({ timeout });
  // The schema loads before anyone signs in (anonymous introspection).
  await page.locator('.graphiql-query-editor .CodeMirror').first().waitFor({ timeout });

  // A query before signing in is refused for want of a token; the refusal
  // must leave the results pane once signed in.
  const responseText = () => page.evaluate(() => document.querySelector('.graphiql-response .CodeMirror').CodeMirror.getValue());
  await page.locator('.graphiql-execute-button').click();
  await page.locator('.graphiql-response').getByText('needs a token').first().waitFor({ timeout });

  // A wrong key says so, in the server's words.
  await bar.key.fill('sk_live_not-a-key');
  await bar.form.locator('button[type=submit]').click();
  await page.getByText('INVALID_API_KEY').waitFor({ timeout });
  const bad = await bar.message.innerText();
  check(/the API key is invalid/.test(bad), `wrong key: the message is ${JSON.stringify(bad)}`);
  console.log(`wrong key: "${bad}"`);
  await shot(page, 'playground-wrong-key.png');

  // The admin's key signs in and shows who that is.
  await bar.key.fill(apiKey);
  await bar.form.locator('button[type=submit]').click();
  await bar.session.waitFor({ timeout });
  const who = await bar.who.innerText();
  check(who === 'admin@example.com', `signed in as ${JSON.stringify(who)}`);
  check(await bar.form.isHidden(), 'the sign-in form still shows');
  check(await bar.message.isHidden(), `a message shows after signing in: ${await bar.message.innerText()}`);
  const stored = await page.evaluate(() => ({
    token: JSON.parse(sessionStorage.getItem('itemsvc:playground:session') || '{}').token,
    session: JSON.stringify(sessionStorage),
    local: JSON.stringify(localStorage),
  }));
  check(typeof stored.token === 'string' && stored.token.length > 20, 'no token in sessionStorage');
  check(!stored.local.includes(stored.token), 'the token is in localStorage');
  check(!stored.session.includes(apiKey) && !stored.local.includes(apiKey), 'the API key was stored');
  console.log(`signed in as ${who}`);
  await page.waitForFunction(() => !document.querySelector('.graphiql-response .CodeMirror').CodeMirror.getValue().includes('needs a token'), null, { timeout });
  console.log('signed in: the refusal from before is gone from the results pane');

  // The example tabs run as they are: the admin's own items, everyone's
  // items with their owners, the users, creating an item.
  const result = page.locator('.graphiql-response');
  const run = async (tab, want) => {
    await page.locator('.graphiql-tab', { hasText: tab }).first().click();
    await page.locator('.graphiql-tab-active', { hasText: tab }).waitFor({ timeout });
    await page.evaluate(() => document.querySelector('.graphiql-response .CodeMirror').CodeMirror.setValue(''));
    await page.locator('.graphiql-execute-button').click();
    // The whole response: the editor draws only the lines in view.
    await page.waitForFunction((want) => {
      const text = document.querySelector('.graphiql-response .CodeMirror').CodeMirror.getValue();
      return text.includes('"errors"') || want.every((w) => text.includes(w));
    }, want, { timeout });
    const text = await page.evaluate(() => document.querySelector('.graphiql-response .CodeMirror').CodeMirror.getValue());
    check(!text.includes('"errors"'), `${tab} failed:\n${text}`);
    console.log(`${tab}: shows ${want.join(', ')}`);
  };
  await run('MyItems', ['"email": "admin@example.com"', '"totalCount": 0']);
  await run('Users', ['alice@example.com', 'bob@example.com']);
  await run('CreateItem', ['Made in the playground']);
  await run('AllItems', [...expected, 'Made in the playground', 'bob@example.com']);
  await shot(page, 'playground-signed-in.png');
  // UpdateItem and DeleteItem run on the id of the item changed last (the
  // one just created), filled in instead of the placeholder.
  const made = JSON.parse(await responseText()).data.items.edges[0].node;
  check(made.name === 'Made in the playground', `AllItems' first item is ${JSON.stringify(made)}`);
  await run('ItemById', [`"id": "${made.id}"`, '"etag": "\\"']);
  await run('NodeById', ['"__typename": "Item"', `"id": "${made.id}"`]);
  await run('UpdateItem', [`"id": "${made.id}"`, '"status": "ARCHIVED"']);
  await run('DeleteItem', [`"deleteItem": "${made.id}"`]);
  console.log(`the examples updated and deleted ${made.id}, the item changed last`);

  // GraphiQL's explorer plugin lists the schema's operations to click.
  await page.locator('.graphiql-tab', { hasText: 'AllItems' }).first().click();
  await page.getByRole('button', { name: /GraphiQL Explorer/ }).click();
  await page.locator('.graphiql-explorer-root').getByText('users', { exact: true }).first().waitFor({ timeout });
  await shot(page, 'playground-explorer.png');
  await page.getByRole('button', { name: /GraphiQL Explorer/ }).click();
  console.log('the explorer plugin shows the schema');

  // Live: the ItemEvents tab streams (SSE, the signed-in token); items
  // created meanwhile through the REST API appear one after the other
  // until stop ends the stream.
  await page.locator('.graphiql-tab', { hasText: 'ItemEvents' }).first().click();
  await page.locator('.graphiql-tab-active', { hasText: 'ItemEvents' }).waitFor({ timeout });
  await page.evaluate(() => document.querySelector('.graphiql-response .CodeMirror').CodeMirror.setValue(''));
  await page.locator('.graphiql-execute-button').click();
  await page.locator('.graphiql-execute-button[aria-label^="Stop"]').waitFor({ timeout });
  const token = await page.evaluate(() => JSON.parse(sessionStorage.getItem('itemsvc:playground:session')).token);
  const createOutside = async (name) => {
    const r = await fetch(`${base}/v1/items`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name }),
    });
    check(r.status === 201, `creating ${name}: HTTP ${r.status}`);
  };
  const shows = (name, ms) => page.waitForFunction((name) =>
    document.querySelector('.graphiql-response .CodeMirror').CodeMirror.getValue().includes(name), name, { timeout: ms })
    .then(() => true, () => false);
  // The stream registers on the server a moment after it opens; an item
  // created before that is not an event of it. Create until one shows.
  let first = '';
  for (let i = 1; i <= 10 && !first; i++) {
    const name = `Live item ${i}`;
    await createOutside(name);
    if (await shows(name, 1500)) first = name;
  }
  check(first !== '', 'no item created with the REST API showed in the ItemEvents stream');
  await createOutside('Live item, next');
  check(await shows('Live item, next', timeout), 'the next event did not show: the stream ended after its first');
  const liveText = await page.evaluate(() => document.querySelector('.graphiql-response .CodeMirror').CodeMirror.getValue());
  check(liveText.includes('"type": "CREATED"') && liveText.includes('admin@example.com'), `the event lacks its type or owner:\n${liveText}`);
  console.log(`live: "${first}" then "Live item, next" showed as they were created`);
  await shot(page, 'playground-live.png');
  await page.locator('.graphiql-execute-button').click(); // stop
  await page.locator('.graphiql-execute-button[aria-label^="Execute"]').waitFor({ timeout });
  console.log('live: stop ended the stream');

  // The browsing view: every user's items for the admin, filtered by an
  // owner picked from the users, edited and deleted in place; live, an
  // item created through REST appears.
  await page.getByRole('button', { name: 'Browse items' }).click();
  const rows = page.locator('#item-rows tr');
  const rowOf = (name) => rows.filter({ has: page.getByRole('cell', { name, exact: true }) });
  for (const name of expected) await rowOf(name).waitFor({ timeout });
  const owner = page.getByLabel('Owner', { exact: true });
  await owner.selectOption({ label: 'alice@example.com' });
  await page.waitForFunction(() => {
    const owners = Array.from(document.querySelectorAll('#item-rows tr td[data-field="owner"]'), (td) => td.textContent);
    return owners.length === 2 && owners.every((o) => o === 'alice@example.com');
  }, null, { timeout });
  check(await page.locator('#page-info').innerText() === '1–2 of 2', `page info: ${await page.locator('#page-info').innerText()}`);
  console.log('browse: the owner filter shows Alice\'s two items');
  await page.getByRole('button', { name: "Edit Alice's desk" }).click();
  await page.getByLabel("Name of Alice's desk").fill("Alice's standing desk");
  await page.getByLabel("Status of Alice's desk").selectOption('ARCHIVED');
  await shot(page, 'playground-browse-edit.png');
  await page.getByRole('button', { name: "Save Alice's desk" }).click();
  await rowOf("Alice's standing desk").filter({ has: page.getByRole('cell', { name: 'ARCHIVED', exact: true }) }).waitFor({ timeout });
  await page.getByText("Saved “Alice's standing desk”.").waitFor({ timeout });
  console.log('browse: edited in place');
  // Someone else renames the item (REST) while it is being edited here:
  // the save is refused (ifMatch), nothing of it is written, and the row
  // shows the item as it is now.
  const deskId = await rowOf("Alice's standing desk").getAttribute('data-id');
  await page.getByRole('button', { name: "Edit Alice's standing desk" }).click();
  await page.getByLabel("Name of Alice's standing desk").fill('Overwritten desk');
  const put = await fetch(`${base}/v1/items/${deskId}`, {
    method: 'PUT',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: "Alice's desk, renamed elsewhere" }),
  });
  check(put.status === 200, `renaming the desk through REST: HTTP ${put.status}`);
  await page.getByRole('button', { name: "Save Alice's standing desk" }).click();
  await page.getByText("“Alice's standing desk” was changed by someone else meanwhile, so it was not saved: the row shows it as it is now.").waitFor({ timeout });
  await rowOf("Alice's desk, renamed elsewhere").waitFor({ timeout });
  check(await rowOf('Overwritten desk').count() === 0, 'the refused edit shows in the table');
  await shot(page, 'playground-browse-conflict.png');
  console.log('browse: an edit made meanwhile elsewhere is not overwritten');
  await page.getByRole('button', { name: "Delete Alice's lamp" }).click();
  await page.getByRole('button', { name: "Yes, delete Alice's lamp" }).click();
  await page.getByText("Deleted “Alice's lamp”.").waitFor({ timeout });
  await rowOf("Alice's lamp").waitFor({ state: 'detached', timeout });
  check(await rows.count() === 1, `${await rows.count()} rows after the delete`);
  // A filter row of ItemWhereInput's: Status is ARCHIVED.
  await page.getByRole('button', { name: 'Add a filter' }).click();
  await page.getByLabel('Filter field').selectOption({ label: 'Status' });
  await page.getByLabel('Status is', { exact: true }).selectOption('ARCHIVED');
  await rowOf("Alice's desk, renamed elsewhere").waitFor({ timeout });
  await shot(page, 'playground-browse.png');
  console.log('browse: deleted in place');

  // Live: with the filters cleared, items created through REST show on top.
  await owner.selectOption({ label: 'anyone' });
  await page.getByRole('button', { name: 'Remove this filter' }).click();
  await rowOf("Bob's chair").waitFor({ timeout });
  await page.getByLabel('Live updates').check();
  await page.getByText('Live: changes show as they happen.').waitFor({ timeout });
  const appears = (name, ms) => rowOf(name).waitFor({ timeout: ms }).then(() => true, () => false);
  let firstLive = '';
  for (let i = 1; i <= 10 && !firstLive; i++) { // the stream registers a moment after it opens
    const name = `Browsed live ${i}`;
    await createOutside(name);
    if (await appears(name, 1500)) firstLive = name;
  }
  check(firstLive !== '', 'no item created through REST appeared in the browsing view');
  await createOutside('Browsed live, next');
  await appears('Browsed live, next', timeout);
  const top = await rows.first().locator('td').first().innerText();
  check(top === 'Browsed live, next', `the newest item is not on top: ${top}`);
  await shot(page, 'playground-browse-live.png');
  await page.getByLabel('Live updates').uncheck();
  console.log(`browse: "${firstLive}" and "Browsed live, next" appeared live`);

  // Paging: Next follows the cursor to the oldest items, Previous comes
  // back. The first page is 20 rows and those that came live.
  const info = page.locator('#page-info');
  const range = async () => (await info.innerText()).match(/^(\d+)–(\d+) of (\d+)$/).slice(1).map(Number);
  const [, shown] = await range();
  const cameLive = await page.locator('#item-rows tr.fresh').count();
  check(cameLive >= 2 && shown === 20 + cameLive && await rows.count() === shown, `page info: ${await info.innerText()}, ${cameLive} came live`);
  await page.getByRole('button', { name: 'Next', exact: true }).click();
  await rowOf("Bob's old item 1").waitFor({ timeout });
  const [from, to, count] = await range();
  check(from === shown + 1 && to === count && await rows.count() === count - shown, `second page: ${await info.innerText()}`);
  check(await page.getByRole('button', { name: 'Next', exact: true }).isDisabled(), 'Next is enabled on the last page');
  await page.getByRole('button', { name: 'Previous', exact: true }).click();
  await rowOf('Browsed live, next').waitFor({ timeout });
  check(await page.getByRole('button', { name: 'Previous', exact: true }).isDisabled(), 'Previous is enabled on the first page');
  console.log(`browse: two pages of ${count} items, there and back`);

  // A user who may not list users sees their own items, with no owner filter.
  await page.locator('#signout').click();
  await bar.form.waitFor({ timeout });
  await bar.key.fill(userKey);
  await bar.form.locator('button[type=submit]').click();
  await bar.session.waitFor({ timeout });
  await rowOf("Alice's desk, renamed elsewhere").waitFor({ timeout });
  check(await owner.isHidden(), 'the owner filter shows to a user who may not list users');
  const seen = await page.locator('#item-rows tr td[data-field="owner"]').allInnerTexts();
  check(seen.length > 0 && seen.every((o) => o === 'alice@example.com'), `Alice sees ${seen.join(', ')}`);
  await shot(page, 'playground-browse-user.png');
  console.log('browse: a user sees only their own items, without the owner filter');
  await page.getByRole('button', { name: 'GraphiQL', exact: true }).click();

  // A key pasted into a tab's variables (as into the Login example's
  // apiKey) is used there, but GraphiQL's copy of the tab in localStorage
  // holds a placeholder in its place (the marker shows the copy was made).
  await page.evaluate((key) => {
    document.querySelector('.graphiql-editor-tool > .graphiql-editor:first-child .CodeMirror').CodeMirror
      .setValue(JSON.stringify({ apiKey: key, marker: 'pasted key' }, null, 2));
  }, apiKey);
  await page.waitForFunction(() => Object.values(localStorage).some((v) => v.includes('pasted key')), null, { timeout });
  check(!(await page.evaluate(() => Object.values(localStorage).join('\n'))).includes(apiKey), 'a pasted API key is kept in localStorage');

  // Signing out forgets the token, and every key and token GraphiQL kept;
  // the same query is then refused.
  await page.locator('#signout').click();
  await bar.form.waitFor({ timeout });
  check(await page.evaluate(() => sessionStorage.length) === 0, 'sessionStorage is not empty after signing out');
  const credential = /sk_(?:live|test)_[A-Za-z0-9]+|eyJ[\w-]*\.[\w-]*\.[\w-]*/;
  const kept = await page.evaluate(() => [...Object.entries(localStorage), ...Object.entries(sessionStorage), ['cookie', document.cookie]]);
  const cookies = (await page.context().cookies()).map((c) => [c.name, c.value]);
  const leaked = [...kept, ...cookies].filter(([, v]) => credential.test(v) || v.includes(apiKey) || v.includes(userKey));
  check(leaked.length === 0, `a key or token stays in the browser after signing out: ${leaked.map(([k]) => k).join(', ')}`);
  console.log(`signed out: no key or token in localStorage (${kept.length - 1} entries), sessionStorage or cookies`);
  await page.locator('.graphiql-execute-button').click();
  await result.getByText('UNAUTHORIZED').first().waitFor({ timeout });
  console.log('signed out: the query is UNAUTHORIZED');

  // A session whose token has expired asks to sign in again.
  await page.evaluate((token) => sessionStorage.setItem('itemsvc:playground:session',
    JSON.stringify({ token, expiresAt: Date.now() + 3_600_000 })), expiredToken);
  await page.reload();
  await page.getByText('Your session has expired').waitFor({ timeout });
  check(await bar.form.isVisible(), 'no sign-in form after the token expired');
  console.log(`expired token: "${await bar.message.innerText()}"`);

  // Without the GraphQL endpoint the page says so rather than wait forever.
  await page.route(`${base}/graphql`, (route) => route.abort('connectionrefused'));
  await page.reload();
  await page.getByText('cannot be reached').first().waitFor({ timeout });
  console.log(`unreachable: "${await bar.message.innerText()}"`);
  await shot(page, 'playground-unreachable.png');
  await page.unroute(`${base}/graphql`);

  // The docs: Redoc renders the OpenAPI document.
  await page.goto(`${base}/docs`);
  await page.getByRole('heading', { name: 'Exchange an API key for an access token' }).waitFor({ timeout });
  await page.getByText('itemsvc').first().waitFor({ timeout });
  console.log('the docs show the operations');
  await shot(page, 'docs.png');

  check(outside.length === 0, `the pages tried to leave the server:\n  ${outside.join('\n  ')}`);
  check(problems.length === 0, `the pages had errors:\n  ${problems.join('\n  ')}`);
  console.log('no request left the server; no script error or CSP violation');
} catch (e) {
  failed = true;
  console.error(e);
  if (outside.length) console.error(`requests that tried to leave the server:\n  ${outside.join('\n  ')}`);
  if (problems.length) console.error(problems.join('\n'));
  // What the page looked like when it failed, for whoever reads the CI log.
  await shot(page, 'pages-failed.png').catch(() => {});
  fs.writeFileSync(path.join(outDir, 'pages-failed.html'), await page.content().catch(() => ''));
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
