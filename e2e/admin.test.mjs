// Browser test of the playground's admin pages, offline (Debian's chromium
// driven by playwright-core; any request leaving the test server, script
// error or Content-Security-Policy violation fails it). An admin signs in
// and, on the Users page, filters, creates Carol (a taken email is refused
// beside the email field), disables and enables her (Make admin and Disable
// ask in the row first; demoting the last admin is refused beside its
// button). On the Webhooks page
// the admin registers a webhook at the Go test's receiver (the secret shown
// once), sees its first delivery fail with 500, retries it and sees it
// succeed, recovers failed deliveries, pauses it (a retry is then refused
// beside Retry) and resumes it. On the Keys page the admin issues Carol a
// key and copies it from the shown-once box. A second browser context
// signs in with that key and follows the browsing view live; the admin
// revokes the key, and within 5 s the second context's stream stops and
// its next request is refused, both visibly. The admin sets a small limit
// on Alice's key (Limits, admins only; 0 is refused beside the field), then
// finds each action in the Audit page and filters it by action and actor.
// Last, Alice signs in: she sees her own keys only, without Users, Audit or
// Limits, and pages through her items until a page is refused, which says
// RATE_LIMITED beside the button she pressed; a save then says so in its row.
//
// Started by e2e/adminpages_test.go, which passes BASE_URL, API_KEY (the
// admin's), USER_API_KEY (Alice's, with more than a page of items),
// RECEIVER_URL, OUTPUT_DIR; CHROMIUM overrides /usr/bin/chromium.
// Screenshots: admin-users.png, admin-webhooks.png, admin-keys-created.png,
// admin-keys-revoked.png, admin-revoked-stream.png, admin-revoked-session.png,
// admin-audit.png, admin-user-keys.png, admin-rate-limited.png.
import fs from 'node:fs';
import path from 'node:path';
import { required, check, launchChromium, outDir, shot } from './harness.mjs';

const base = required('BASE_URL');
const adminKey = required('API_KEY');
const aliceKey = required('USER_API_KEY');
const receiverURL = required('RECEIVER_URL');
const timeout = 15_000;

const browser = await launchChromium();
const outside = []; // requests that tried to leave the server
const problems = []; // script errors and CSP violations
const pages = [];
let failed = false;

// newPage opens a browser context of its own (its own sessionStorage: a
// second person) that may reach the test server and nothing else.
async function newPage(name) {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
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
const token = (page) => page.evaluate(() => JSON.parse(sessionStorage.getItem('itemsvc:playground:session')).token);

async function createItem(tok, name) {
  const r = await fetch(`${base}/v1/items`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${tok}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  check(r.status === 201, `creating ${name}: HTTP ${r.status}`);
}

// until presses a button (a Refresh) until what wants shows, within ms:
// the pages read nothing by themselves, so the test asks as a user would.
async function until(press, wants, ms) {
  const end = Date.now() + ms;
  for (;;) {
    await press.click();
    if (await wants.waitFor({ timeout: 1000 }).then(() => true, () => false)) return;
    check(Date.now() < end, `${wants} did not show within ${ms} ms`);
  }
}

try {
  const admin = await newPage('admin');
  await signIn(admin, adminKey);
  check(await admin.locator('#who').innerText() === 'admin@example.com', 'not signed in as the admin');
  // The key's remaining points show from the X-RateLimit-* headers.
  await admin.locator('#points').getByText(/^\d+ of \d+ points left, reset at /).waitFor({ timeout });
  console.log(`points: "${await admin.locator('#points').innerText()}"`);

  // ---- Users: filter, create (a taken email refused beside its field), disable and enable.
  await view(admin, 'Users').click();
  const users = admin.locator('#users-rows tr');
  const userRow = (email) => users.filter({ has: admin.getByRole('cell', { name: email, exact: true }) });
  await userRow('alice@example.com').waitFor({ timeout });
  await admin.locator('#users-filters').getByLabel('Role', { exact: true }).selectOption('ADMIN');
  await userRow('alice@example.com').waitFor({ state: 'detached', timeout });
  check(await users.count() === 1 && (await users.first().innerText()).includes('admin@example.com'), 'the role filter did not keep only the admin');
  await admin.locator('#users-filters').getByLabel('Role', { exact: true }).selectOption('');
  await admin.getByLabel('Email starts with').fill('bo');
  await admin.getByRole('button', { name: 'Filter', exact: true }).click();
  await userRow('alice@example.com').waitFor({ state: 'detached', timeout });
  await userRow('bob@example.com').waitFor({ timeout });
  await admin.getByLabel('Email starts with').fill('');
  await admin.getByRole('button', { name: 'Filter', exact: true }).click();
  await userRow('alice@example.com').waitFor({ timeout });
  console.log('users: filtered by role and email prefix');

  const create = admin.locator('#user-create');
  await create.getByLabel('Email').fill('carol@example.com');
  await create.getByLabel('Name').fill('Carol');
  await create.getByRole('button', { name: 'Create user' }).click();
  await userRow('carol@example.com').waitFor({ timeout });
  await admin.getByText('Created carol@example.com (user).').waitFor({ timeout });
  const carolID = await userRow('carol@example.com').getAttribute('data-id');
  // The same email again: refused, beside the email field.
  await create.getByLabel('Email').fill('Carol@example.com');
  await create.getByLabel('Name').fill('Carol again');
  await create.getByRole('button', { name: 'Create user' }).click();
  const emailError = create.locator('#new-user-email + .inline-error');
  await emailError.getByText('VALIDATION_ERROR').waitFor({ timeout });
  console.log(`users: a taken email is refused beside the field: "${await emailError.innerText()}"`);
  await create.getByLabel('Email').fill('');
  await create.getByLabel('Name').fill('');
  // Make admin and Disable ask in the row first; Keep changes nothing.
  await admin.getByRole('button', { name: 'Make carol@example.com admin' }).click();
  await userRow('carol@example.com').getByText('Make carol@example.com an admin?').waitFor({ timeout });
  await admin.getByRole('button', { name: 'Keep carol@example.com as is' }).click();
  await admin.getByRole('button', { name: 'Make carol@example.com admin' }).waitFor({ timeout });
  check(await userRow('carol@example.com').getByRole('cell', { name: 'user', exact: true }).count() === 1, 'Keep changed the role');
  await admin.getByRole('button', { name: 'Disable carol@example.com' }).click();
  await userRow('carol@example.com').getByText('Disable carol@example.com?').waitFor({ timeout });
  check(await userRow('carol@example.com').getByRole('cell', { name: 'enabled', exact: true }).count() === 1,
    'Disable acted before it was confirmed');
  await admin.getByRole('button', { name: 'Yes, disable: carol@example.com' }).click();
  await userRow('carol@example.com').getByRole('cell', { name: 'disabled', exact: true }).waitFor({ timeout });
  console.log('users: Make admin and Disable ask first; Keep keeps, Yes disables');
  await admin.getByRole('button', { name: 'Enable carol@example.com' }).click();
  await userRow('carol@example.com').getByRole('cell', { name: 'enabled', exact: true }).waitFor({ timeout });
  check(await admin.evaluate(() => document.activeElement.getAttribute('aria-label')) === 'Disable carol@example.com',
    'focus did not stay on the row after Enable');
  // The last admin cannot demote themselves: refused beside the button.
  await admin.getByRole('button', { name: 'Make admin@example.com user' }).click();
  const demoteError = admin.locator('#users-rows tr.me').locator('.inline-error:not([hidden])');
  await demoteError.getByText('VALIDATION_ERROR').waitFor({ timeout });
  console.log(`users: demoting the last admin is refused beside the button: "${await demoteError.innerText()}"`);
  await shot(admin, 'admin-users.png');
  console.log(`users: created Carol (${carolID}), disabled and enabled her`);

  // ---- Webhooks: the admin's, at the Go test's receiver.
  await view(admin, 'Webhooks').click();
  await admin.getByText('No webhooks.').waitFor({ timeout });
  await admin.getByLabel('URL', { exact: true }).fill('not a url');
  await admin.getByRole('button', { name: 'Create webhook' }).click();
  // (the browser's own check of type=url stops it first, beside the field)
  check(await admin.locator('#new-webhook-url:invalid').count() === 1, 'the URL field accepts "not a url"');
  await admin.getByLabel('URL', { exact: true }).fill(receiverURL);
  await admin.getByLabel('Description', { exact: true }).fill('e2e receiver');
  await admin.getByRole('button', { name: 'Create webhook' }).click();
  const hookSecret = admin.getByLabel('The new signing secret');
  await hookSecret.waitFor({ timeout });
  check((await hookSecret.inputValue()).startsWith('whsec_'), `the secret shown: ${await hookSecret.inputValue()}`);
  await admin.locator('#webhook-secret').getByRole('button', { name: 'I have copied it' }).click();
  const hookRow = admin.locator('#webhooks-rows tr', { hasText: receiverURL }).first();
  await hookRow.waitFor({ timeout });
  const hookID = await hookRow.getAttribute('data-id');
  console.log(`webhooks: created ${hookID}`);
  // An event for it: the admin's endpoint gets every item's.
  await createItem(await token(admin), 'Item for the webhook');
  await admin.getByRole('button', { name: `Deliveries of ${receiverURL}` }).click();
  const refresh = admin.getByRole('button', { name: `Refresh the deliveries to ${receiverURL}` });
  const delivery = admin.locator('table.deliveries tbody tr').first();
  await until(refresh, delivery.getByRole('cell', { name: '500', exact: true }), timeout);
  console.log(`webhooks: the first attempt failed: ${await delivery.innerText()}`);
  await delivery.getByRole('button', { name: /^Retry delivery / }).click();
  await until(refresh, delivery.getByRole('cell', { name: 'succeeded', exact: true }), timeout);
  check(await delivery.getByRole('cell', { name: '200', exact: true }).count() === 1 &&
    await delivery.getByRole('cell', { name: '2', exact: true }).count() === 1, `the retried delivery: ${await delivery.innerText()}`);
  console.log(`webhooks: retried, it succeeded: ${await delivery.innerText()}`);
  await admin.getByRole('button', { name: `Recover failed deliveries to ${receiverURL}` }).click();
  await admin.getByText('0 failed deliveries are pending again.').waitFor({ timeout });
  await admin.getByRole('button', { name: `Pause ${receiverURL}` }).click();
  await hookRow.getByRole('cell', { name: 'paused', exact: true }).waitFor({ timeout });
  // Retrying while paused is refused beside the Retry button.
  await delivery.getByRole('button', { name: /^Retry delivery / }).click();
  await delivery.locator('.inline-error').getByText('VALIDATION_ERROR').waitFor({ timeout });
  console.log(`webhooks: paused; a retry says "${await delivery.locator('.inline-error').innerText()}"`);
  await shot(admin, 'admin-webhooks.png');
  await admin.getByRole('button', { name: `Resume ${receiverURL}` }).click();
  await hookRow.getByRole('cell', { name: 'active', exact: true }).waitFor({ timeout });
  console.log('webhooks: resumed');

  // ---- Keys: Carol's, from her row; a new one shown once and copied.
  await view(admin, 'Users').click();
  await admin.getByRole('button', { name: 'Keys of carol@example.com' }).click();
  await admin.locator('#keys').waitFor({ timeout });
  await admin.waitForFunction((id) => document.getElementById('keys-owner').value === id, carolID, { timeout });
  await admin.getByText('No keys.').waitFor({ timeout });
  await admin.getByLabel('Label').fill('Carol laptop');
  await admin.getByRole('button', { name: 'Create key' }).click();
  const secret = admin.getByLabel('The new API key');
  await secret.waitFor({ timeout });
  await admin.locator('#key-secret').getByText('Copy it now: it is shown this once').waitFor({ timeout });
  await admin.locator('#key-secret').getByRole('button', { name: 'Copy', exact: true }).click();
  await admin.getByText('Copied to the clipboard.').waitFor({ timeout });
  const carolKey = await admin.evaluate(() => navigator.clipboard.readText());
  check(/^sk_(live|test)_/.test(carolKey) && carolKey === await secret.inputValue(), `the clipboard holds ${JSON.stringify(carolKey)}`);
  const keyRow = admin.locator('#keys-rows tr', { hasText: 'Carol laptop' });
  await keyRow.waitFor({ timeout });
  const keyID = await keyRow.getAttribute('data-id');
  check((await keyRow.innerText()).includes('read, write'), `the key row: ${await keyRow.innerText()}`);
  await shot(admin, 'admin-keys-created.png');
  await admin.locator('#key-secret').getByRole('button', { name: 'I have copied it' }).click();
  check(await secret.isHidden(), 'the key still shows');
  const kept = await admin.evaluate(() => JSON.stringify([localStorage, sessionStorage]));
  check(!kept.includes(carolKey), 'the new key is kept in the browser');
  console.log(`keys: created ${keyID} for Carol and copied it`);

  // ---- A second person signs in with the key and follows the browsing view live.
  const carol = await newPage('carol');
  await signIn(carol, carolKey);
  check(await carol.locator('#who').innerText() === 'carol@example.com', 'the second context is not Carol');
  check(await view(carol, 'Users').isHidden() && await view(carol, 'Audit').isHidden(), 'a user sees the Users or Audit page');
  await view(carol, 'Browse items').click();
  await carol.getByText('No items match.').waitFor({ timeout });
  await carol.getByLabel('Live updates').check();
  await carol.getByText('Live: changes show as they happen.').waitFor({ timeout });
  const carolToken = await token(carol);
  let seen = '';
  for (let i = 1; i <= 10 && !seen; i++) { // the stream registers a moment after it opens
    const name = `Carol's live item ${i}`;
    await createItem(carolToken, name);
    if (await carol.getByRole('cell', { name, exact: true }).waitFor({ timeout: 1500 }).then(() => true, () => false)) seen = name;
  }
  check(seen !== '', 'the live view showed none of Carol\'s new items');
  console.log(`carol: signed in with the copied key; "${seen}" came live`);

  // ---- The admin revokes it, after a confirmation in the row.
  await admin.getByRole('button', { name: 'Revoke Carol laptop' }).click();
  await keyRow.getByText('Revoke Carol laptop? Whatever uses it stops working.').waitFor({ timeout });
  await admin.getByRole('button', { name: 'Yes, revoke Carol laptop' }).click();
  await keyRow.getByText(/^revoked /).waitFor({ timeout });
  const revokedAt = Date.now();
  await shot(admin, 'admin-keys-revoked.png');
  console.log('keys: revoked Carol laptop');
  // Carol's open stream stops, visibly, within 5 s.
  await carol.locator('#browse-message.error').getByText(/The live stream (stopped|ended)/)
    .waitFor({ timeout: Math.max(1, 5000 - (Date.now() - revokedAt)) });
  console.log(`carol: "${await carol.locator('#browse-message').innerText()}" after ${Date.now() - revokedAt} ms`);
  check(!(await carol.getByLabel('Live updates').isChecked()), 'Live updates stays ticked after the stream stopped');
  await shot(carol, 'admin-revoked-stream.png');
  // Her next request is refused, and the page says so.
  await carol.locator('#item-head').getByRole('button', { name: 'Sort by Name' }).click();
  await carol.locator('#message.error').getByText('The server no longer accepts your token').waitFor({ timeout: Math.max(1, 5000 - (Date.now() - revokedAt)) });
  await carol.locator('#signin').waitFor({ timeout });
  console.log(`carol: "${await carol.locator('#message').innerText()}" within ${Date.now() - revokedAt} ms of the revocation`);
  await shot(carol, 'admin-revoked-session.png');

  // ---- Limits (admins): Alice's key gets a small per-minute limit; her
  // browser spends it paging, and the refused page button says why beside itself.
  await view(admin, 'Users').click();
  await admin.getByRole('button', { name: 'Keys of alice@example.com' }).click();
  // The row of the key her browser will use (she has another, newer one).
  const aliceKeyName = await admin.waitForFunction((key) => Array.from(document.querySelectorAll('#keys-rows tr code'),
    (c) => c.textContent).find((p) => key.startsWith(p)), aliceKey, { timeout }).then((h) => h.jsonValue());
  const aliceRow = admin.locator('#keys-rows tr', { has: admin.locator('code', { hasText: aliceKeyName }) });
  await admin.getByRole('button', { name: `Edit the limits of ${aliceKeyName}` }).click();
  await admin.getByLabel(`Requests per minute for ${aliceKeyName}`).fill('0');
  await admin.getByRole('button', { name: `Save the limits of ${aliceKeyName}` }).click();
  const limitError = aliceRow.locator('.inline-error:not([hidden])');
  await limitError.getByText('VALIDATION_ERROR').waitFor({ timeout });
  console.log(`limits: 0 is refused beside the field: "${await limitError.innerText()}"`);
  await admin.getByLabel(`Requests per minute for ${aliceKeyName}`).fill('8');
  await admin.getByRole('button', { name: `Save the limits of ${aliceKeyName}` }).click();
  await aliceRow.getByRole('cell', { name: '8/min, default/h', exact: true }).waitFor({ timeout });
  console.log(`limits: Alice's key ${aliceKeyName} may spend 8 points a minute`);

  // ---- Audit: every action above, newest first; filtered by actor and action.
  await view(admin, 'Audit').click();
  const audit = admin.locator('#audit-rows tr');
  await audit.first().waitFor({ timeout });
  const actions = await admin.locator('#audit-rows tr td:nth-child(3)').allInnerTexts();
  const targets = await admin.locator('#audit-rows tr td:nth-child(4)').allInnerTexts();
  const has = (action, target) => actions.some((a, i) => a === action && (!target || targets[i] === target));
  for (const [action, target] of [['user created', carolID], ['user updated', carolID], ['key created', keyID],
    ['key revoked', keyID], ['key updated', null], ['webhook created', hookID], ['webhook updated', hookID], ['delivery retried', null]]) {
    check(has(action, target), `the audit trail lacks ${action}${target ? ` of ${target}` : ''}: ${actions.join(', ')}`);
  }
  const times = await admin.locator('#audit-rows tr td:first-child').evaluateAll((tds) => tds.map((td) => td.title));
  check(times.every((t, i) => i === 0 || Date.parse(t) <= Date.parse(times[i - 1])), `the audit trail is not newest first: ${times.join(', ')}`);
  check((await audit.first().innerText()).includes('admin@example.com'), 'the actor is not shown by email');
  await admin.getByLabel('Action', { exact: true }).selectOption('KEY_REVOKED');
  await admin.waitForFunction(() => Array.from(document.querySelectorAll('#audit-rows tr td:nth-child(3)')).every((td) => td.textContent === 'key revoked'), null, { timeout });
  check(await audit.count() === 1 && (await audit.first().innerText()).includes(keyID), `the KEY_REVOKED filter: ${await audit.allInnerTexts()}`);
  await admin.getByLabel('Actor', { exact: true }).selectOption({ label: 'alice@example.com' });
  await admin.getByText('No audit records match.').waitFor({ timeout });
  await admin.getByLabel('Actor', { exact: true }).selectOption({ label: 'admin@example.com' });
  await admin.getByLabel('Action', { exact: true }).selectOption('');
  await audit.nth(5).waitFor({ timeout });
  await shot(admin, 'admin-audit.png');
  console.log(`audit: ${actions.length} records, each action found; filtered by actor and action`);

  // ---- Alice (a user) sees her own keys only, without limits to edit;
  // then she spends her small limit paging until a page is refused.
  const alice = await newPage('alice');
  await signIn(alice, aliceKey);
  await view(alice, 'Keys').click();
  await alice.locator('#keys-rows tr').first().waitFor({ timeout });
  check(await view(alice, 'Users').isHidden() && await view(alice, 'Audit').isHidden(), 'Alice sees Users or Audit');
  check(await alice.locator('#keys-owner-filter').isHidden(), 'Alice may pick whose keys');
  check(await alice.getByRole('button', { name: /^Edit the limits/ }).count() === 0, 'Alice may edit her limits');
  await shot(alice, 'admin-user-keys.png');
  console.log('alice: her keys, no owner picker, no limits to edit');

  await view(alice, 'Browse items').click();
  await alice.locator('#item-rows tr').first().waitFor({ timeout });
  const pageError = alice.locator('#page-error');
  // Each page read spends a point: Next and Previous in turn until one is
  // refused, which says so beside the button pressed.
  let pressed = '';
  for (let i = 0; i < 12 && await pageError.isHidden(); i++) {
    pressed = await alice.locator('#page-info').innerText().then((t) => (t.startsWith('1–') ? 'Next' : 'Previous'));
    const before = await alice.locator('#page-info').innerText();
    await alice.getByRole('button', { name: pressed, exact: true }).click();
    await alice.waitForFunction((before) => document.getElementById('page-info').textContent !== before ||
      !document.getElementById('page-error').hidden, before, { timeout });
  }
  check(await alice.evaluate((id) => document.getElementById(id).nextElementSibling.id, pressed === 'Next' ? 'page-next' : 'page-prev') === 'page-error',
    `the refusal is not beside ${pressed}`);
  check(await alice.locator('#item-rows tr').count() > 0, 'the refused page emptied the table');
  await pageError.getByText('RATE_LIMITED').waitFor({ timeout });
  const limited = await pageError.innerText();
  check(/Rate limit reached: no points left until/.test(limited), `Next's refusal: ${limited}`);
  await alice.locator('#points').getByText(/^0 of 8 points left/).waitFor({ timeout });
  await shot(alice, 'admin-rate-limited.png');
  // A save refused for want of points says so in its row too.
  const first = (await alice.locator('#item-rows tr td').first().innerText());
  await alice.getByRole('button', { name: `Edit ${first}`, exact: true }).click();
  await alice.getByLabel(`Name of ${first}`).fill(`${first}, renamed`);
  await alice.getByRole('button', { name: `Save ${first}`, exact: true }).click();
  await alice.locator(`#item-rows tr:has(button[aria-label="Save ${first}"]) .inline-error`).getByText('RATE_LIMITED').waitFor({ timeout });
  console.log(`rate limit: saving "${first}" is refused beside Save`);
  console.log(`rate limit: "${limited}" beside ${pressed}; the bar says "${await alice.locator('#points').innerText()}"`);


  check(outside.length === 0, `the pages tried to leave the server:\n  ${outside.join('\n  ')}`);
  check(problems.length === 0, `the pages had errors:\n  ${problems.join('\n  ')}`);
  console.log('no request left the server; no script error or CSP violation');
} catch (e) {
  failed = true;
  console.error(e);
  if (outside.length) console.error(`requests that tried to leave the server:\n  ${outside.join('\n  ')}`);
  if (problems.length) console.error(problems.join('\n'));
  for (const [name, page] of pages) {
    await shot(page, `admin-failed-${name}.png`).catch(() => {});
    fs.writeFileSync(path.join(outDir, `admin-failed-${name}.html`), await page.content().catch(() => ''));
  }
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
