// Browser test of the items page and the event history, offline (Debian's
// chromium driven by playwright-core; any request leaving the test server,
// script error or Content-Security-Policy violation fails it). Both pages
// build themselves from the schema, which the page reads by introspection
// once: the test runs an introspection query of its own and checks that
// the create form's fields are CreateItemInput's (each input as its type
// says: a select for an enum, required when non-null) and that the sortable
// columns are ItemOrderField's. The admin sorts the items by name, both
// ways (the rows are the API's first page in that order), filters them by
// a where-input row, creates an item (a blank name is refused beside its
// field), opens its detail view (every field of Item shows) and edits it
// there; then on the Events page sees its CREATED and UPDATED events,
// filters by type and since an event, pages, and tails live while items
// are created through REST. Last, a second tab whose introspection answer
// gains CreateItemInput fields of every kind (Int, Float, Boolean, Time, an
// enum, another scalar) shows each in the form as its type says: a field
// added to the schema needs no change to the page. (That tab's anonymous
// introspection is refused, so it reads the schema with its token.)
//
// Started by e2e/itemspages_test.go, which passes BASE_URL, API_KEY (the
// admin's), OUTPUT_DIR; CHROMIUM overrides /usr/bin/chromium. Screenshots:
// items-sorted.png, items-created.png, items-detail.png, events.png,
// events-live.png.
import fs from 'node:fs';
import path from 'node:path';
import { required, check, launchChromium, outDir, shot } from './harness.mjs';

const base = required('BASE_URL');
const adminKey = required('API_KEY');
const timeout = 15_000;

const browser = await launchChromium();
const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
const outside = [];
const problems = [];
let failed = false;
await context.route('**/*', (route) => {
  const url = new URL(route.request().url());
  if (['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) return route.continue();
  outside.push(`${route.request().resourceType()} ${url.href}`);
  return route.abort('internetdisconnected');
});
const page = await context.newPage();
page.on('pageerror', (e) => problems.push(`page error: ${e.stack}`));
page.on('console', (m) => {
  if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) problems.push(`CSP: ${m.text()}`);
});
// The page's own introspection queries: one per page load.
let introspections = 0;
page.on('request', (r) => {
  if (r.method() === 'POST' && r.url().endsWith('/graphql') && (r.postData() || '').includes('AdminSchema')) introspections++;
});

// gql runs an operation as the test's own client.
async function gql(token, query, variables) {
  const r = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: Object.assign({ 'Content-Type': 'application/json' }, token ? { Authorization: `Bearer ${token}` } : {}),
    body: JSON.stringify({ query, variables }),
  });
  const j = await r.json();
  check(!j.errors, `${query}: ${JSON.stringify(j.errors)}`);
  return j.data;
}

const named = (t) => (t.ofType ? named(t.ofType) : t);
const typeRef = 'kind name ofType { kind name ofType { kind name ofType { kind name } } }';

try {
  await page.goto(`${base}/playground`);
  await page.locator('#signin').waitFor({ timeout });
  await page.locator('#api-key').fill(adminKey);
  await page.locator('#signin button[type=submit]').click();
  await page.locator('#session').waitFor({ timeout });
  const token = await page.evaluate(() => JSON.parse(sessionStorage.getItem('itemsvc:playground:session')).token);

  await page.locator('nav.views').getByRole('button', { name: 'Browse items', exact: true }).click();
  const rows = page.locator('#item-rows tr');
  await rows.first().waitFor({ timeout });

  // ---- The form and the columns are the schema's: an introspection query
  // of the test's own says what they must be.
  const schema = await gql(null, `{
    create: __type(name: "CreateItemInput") { inputFields { name type { ${typeRef} } } }
    order: __type(name: "ItemOrderField") { enumValues { name } }
  }`);
  const want = schema.create.inputFields;
  const fields = await page.locator('#item-create .field').evaluateAll((spans) => spans.map((s) => {
    const input = s.querySelector('input, select, textarea');
    return { name: s.dataset.field, tag: input.tagName, type: input.type, required: input.required, label: s.querySelector('label').textContent };
  }));
  check(JSON.stringify(fields.map((f) => f.name)) === JSON.stringify(want.map((f) => f.name)),
    `the create form's fields ${fields.map((f) => f.name)} are not CreateItemInput's ${want.map((f) => f.name)}`);
  for (const [i, f] of want.entries()) {
    const t = named(f.type);
    const got = fields[i];
    const wantTag = t.kind === 'ENUM' ? 'SELECT' : 'INPUT';
    check(got.tag === wantTag, `${f.name} (${t.name}) is a ${got.tag}, want ${wantTag}`);
    check(got.required === (f.type.kind === 'NON_NULL'), `${f.name}: required ${got.required}, its type ${f.type.kind}`);
  }
  console.log(`create form: ${fields.map((f) => `${f.label} (${f.tag.toLowerCase()}${f.required ? ', required' : ''})`).join(', ')}: CreateItemInput's fields`);
  const sortable = await page.locator('#item-head th[aria-sort]').evaluateAll((ths) => ths.map((th) => th.dataset.field));
  const orderNames = schema.order.enumValues.map((v) => v.name);
  const asEnum = (f) => f.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
  check(sortable.length > 0 && sortable.every((f) => orderNames.includes(asEnum(f))), `sortable columns ${sortable} are not all ItemOrderField's ${orderNames}`);
  const headers = await page.locator('#item-head th[data-field]').evaluateAll((ths) => ths.map((th) => th.dataset.field));
  check(orderNames.every((o) => !headers.some((h) => asEnum(h) === o) || sortable.some((s) => asEnum(s) === o)),
    `a column ItemOrderField sorts by has no sort button: ${headers} / ${sortable}`);
  console.log(`columns: ${headers.join(', ')}; sortable: ${sortable.join(', ')} (ItemOrderField: ${orderNames.join(', ')})`);

  // ---- Sorting: Name ascending, then descending; the rows are the API's
  // first page in that order.
  const names = () => page.locator('#item-rows td[data-field="name"]').allInnerTexts();
  const apiNames = async (direction) => (await gql(token, `query($d: OrderDirection!) { items(first: 20, orderBy: {field: NAME, direction: $d}) { edges { node { name } } } }`,
    { d: direction })).items.edges.map((e) => e.node.name);
  const sortName = page.locator('#item-head').getByRole('button', { name: 'Sort by Name' });
  await sortName.click();
  await page.locator('#item-head th[data-field="name"][aria-sort="ascending"]').waitFor({ timeout });
  const asc = await apiNames('ASC');
  await page.waitForFunction((want) => JSON.stringify(Array.from(document.querySelectorAll('#item-rows td[data-field="name"]'), (td) => td.textContent)) === want,
    JSON.stringify(asc), { timeout });
  check(JSON.stringify(asc) === JSON.stringify([...asc].sort()), `the API's ascending names are not sorted: ${asc}`);
  await sortName.click();
  await page.locator('#item-head th[data-field="name"][aria-sort="descending"]').waitFor({ timeout });
  const desc = await apiNames('DESC');
  await page.waitForFunction((want) => JSON.stringify(Array.from(document.querySelectorAll('#item-rows td[data-field="name"]'), (td) => td.textContent)) === want,
    JSON.stringify(desc), { timeout });
  check(desc[0] !== asc[0], 'descending starts as ascending does');
  await shot(page, 'items-sorted.png');
  console.log(`sort: by name ascending (${asc[0]}, ${asc[1]}, …) then descending (${desc[0]}, ${desc[1]}, …)`);

  // ---- A filter row from ItemWhereInput: Name contains (any case) "bob's".
  await page.getByRole('button', { name: 'Add a filter' }).click();
  await page.getByLabel('Filter field').selectOption({ label: 'Name' });
  check(await page.getByLabel('Filter condition').inputValue() === 'nameContainsFold', 'a Name filter does not start as contains (any case)');
  await page.getByLabel('Name contains (any case)').fill("BOB'S");
  await page.getByRole('button', { name: 'Filter', exact: true }).click();
  await page.waitForFunction(() => {
    const n = Array.from(document.querySelectorAll('#item-rows td[data-field="name"]'), (td) => td.textContent);
    return n.length === 12 && n.every((x) => x.startsWith("Bob's"));
  }, null, { timeout });
  check(await page.locator('#page-info').innerText() === '1–12 of 12', `page info: ${await page.locator('#page-info').innerText()}`);
  await page.getByRole('button', { name: 'Remove this filter' }).click();
  await page.waitForFunction(() => document.getElementById('page-info').textContent.endsWith('of 24'), null, { timeout });
  console.log('filter: name contains (any case) "BOB\'S" keeps Bob\'s 12 items');

  // ---- Create: a blank name is refused beside the field; then an item.
  const create = page.locator('#item-create');
  await create.getByLabel('Name', { exact: true }).fill('   ');
  await create.getByRole('button', { name: 'Create item' }).click();
  const nameError = create.locator('#new-item-name + .inline-error');
  await nameError.getByText('VALIDATION_ERROR').waitFor({ timeout });
  console.log(`create: a blank name is refused beside the field: "${await nameError.innerText()}"`);
  await create.getByLabel('Name', { exact: true }).fill('Made on the items page');
  await create.getByLabel('Description', { exact: true }).fill('with a description');
  await create.getByLabel('Status', { exact: true }).selectOption('ARCHIVED');
  await create.getByRole('button', { name: 'Create item' }).click();
  await page.getByText('Created “Made on the items page”.').waitFor({ timeout });
  const madeRow = rows.filter({ has: page.getByRole('cell', { name: 'Made on the items page', exact: true }) });
  await madeRow.waitFor({ timeout });
  const madeID = await madeRow.getAttribute('data-id');
  const made = (await gql(token, 'query($id: ID!) { item(id: $id) { name description status } }', { id: madeID })).item;
  check(made.description === 'with a description' && made.status === 'ARCHIVED', `the created item: ${JSON.stringify(made)}`);
  check(await create.getByLabel('Name', { exact: true }).inputValue() === '', 'the create form was not cleared');
  await shot(page, 'items-created.png');
  console.log(`create: ${madeID}, archived, with its description`);

  // ---- Its detail view: every field, and the edit form of UpdateItemInput.
  await page.getByRole('button', { name: 'Details of Made on the items page' }).click();
  const detail = page.locator('#item-detail');
  await detail.waitFor({ timeout });
  check(await page.locator('#browse-list').isHidden(), 'the list still shows beside the detail view');
  const dd = (f) => detail.locator(`dd[data-field="${f}"]`);
  check(await dd('id').innerText() === madeID, `detail id: ${await dd('id').innerText()}`);
  check(await dd('description').innerText() === 'with a description', `detail description: ${await dd('description').innerText()}`);
  check((await dd('owner').innerText()).startsWith('admin@example.com'), `detail owner: ${await dd('owner').innerText()}`);
  const itemFields = (await gql(null, '{ __type(name: "Item") { fields { name } } }')).__type.fields.map((f) => f.name);
  const shown = await detail.locator('dd[data-field]').evaluateAll((dds) => dds.map((d) => d.dataset.field));
  check(itemFields.every((f) => shown.includes(f)), `the detail view lacks some of Item's fields ${itemFields}: ${shown}`);
  const update = (await gql(null, '{ __type(name: "UpdateItemInput") { inputFields { name } } }')).__type.inputFields.map((f) => f.name);
  const editFields = await detail.locator('#item-edit .field').evaluateAll((s) => s.map((x) => x.dataset.field));
  check(JSON.stringify(editFields) === JSON.stringify(update), `the edit form's fields ${editFields} are not UpdateItemInput's ${update}`);
  await detail.getByLabel('Description', { exact: true }).fill('described again');
  await detail.getByLabel('Status', { exact: true }).selectOption('ACTIVE');
  await detail.getByRole('button', { name: 'Save changes' }).click();
  await detail.getByText('Saved “Made on the items page”.').waitFor({ timeout });
  await page.waitForFunction(() => document.querySelector('#item-detail dd[data-field="description"]').textContent === 'described again', null, { timeout });
  check(await dd('status').innerText() === 'ACTIVE', `status after the save: ${await dd('status').innerText()}`);
  await shot(page, 'items-detail.png');
  await detail.getByRole('button', { name: 'Back to the list' }).click();
  await madeRow.getByRole('cell', { name: 'described again', exact: true }).waitFor({ timeout });
  console.log('detail: every field of Item; saved a new description and status from the edit form');

  // ---- The event history: the item's events newest first; by type; since; paged.
  await page.locator('nav.views').getByRole('button', { name: 'Events', exact: true }).click();
  const events = page.locator('#events-rows tr');
  await events.first().waitFor({ timeout });
  const firstTwo = await events.evaluateAll((trs) => trs.slice(0, 2).map((tr) => tr.cells[1].textContent + ' ' + tr.cells[2].textContent));
  check(JSON.stringify(firstTwo) === JSON.stringify(['updated Made on the items page', 'created Made on the items page']),
    `the newest events: ${firstTwo}`);
  check(await events.count() === 20, `${await events.count()} events on the first page`);
  await shot(page, 'events.png');
  await page.locator('#events').getByRole('button', { name: 'Next page', exact: true }).click();
  await page.locator('#events').getByText('page 2').waitFor({ timeout });
  const second = await events.count();
  check(second === 6, `${second} events on the second page, want the 26 events' last 6`);
  await page.locator('#events').getByRole('button', { name: 'Previous page', exact: true }).click();
  await page.locator('#events').getByText('page 1').waitFor({ timeout });
  await page.getByLabel('updated', { exact: true }).check();
  await page.waitForFunction(() => {
    const types = Array.from(document.querySelectorAll('#events-rows tr'), (tr) => tr.cells[1].textContent);
    return types.length === 1 && types[0] === 'updated';
  }, null, { timeout });
  await page.getByLabel('updated', { exact: true }).uncheck();
  await events.nth(19).waitFor({ timeout });
  // Since: only the events after the item's CREATED, i.e. its UPDATED.
  const createdID = await events.nth(1).getAttribute('data-id');
  await page.getByRole('button', { name: `Events after ${createdID}` }).click();
  await page.waitForFunction(() => document.querySelectorAll('#events-rows tr').length === 1, null, { timeout });
  check(await page.getByLabel('After event').inputValue() === createdID, 'the since field does not hold the event picked');
  console.log(`events: newest first, 20 + ${second} over two pages, by type, and since ${createdID}`);

  // Live tail: items created through REST come on top, after the one event on screen.
  await page.getByLabel('Live tail').check();
  await page.getByText('Live: new events show on top').waitFor({ timeout });
  const createOutside = async (name) => {
    const r = await fetch(`${base}/v1/items`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name }),
    });
    check(r.status === 201, `creating ${name}: HTTP ${r.status}`);
  };
  await createOutside('Tailed item 1');
  await createOutside('Tailed item 2');
  await page.waitForFunction(() => {
    const names = Array.from(document.querySelectorAll('#events-rows tr'), (tr) => tr.cells[2].textContent);
    return names.length === 3 && names[0] === 'Tailed item 2' && names[1] === 'Tailed item 1';
  }, null, { timeout });
  check(await page.locator('#events-rows tr.fresh').count() === 2, 'the tailed events are not marked fresh');
  await shot(page, 'events-live.png');
  await page.getByLabel('Live tail').uncheck();
  console.log('events: the live tail showed two items created through REST, newest on top');

  // An event opens its item's detail view.
  await page.getByRole('button', { name: new RegExp(`^Open Tailed item 2 `) }).click();
  await page.locator('#item-detail dd[data-field="name"]').getByText('Tailed item 2').waitFor({ timeout });
  console.log('events: Open shows the item\'s detail view');

  check(introspections === 1, `the page ran ${introspections} introspection queries of its own, want 1`);

  // ---- A field added to the schema shows with no change to the page: a
  // second tab whose introspection answer (and only it) gains CreateItemInput
  // fields of every kind builds each as its type says.
  const added = [
    ['priority', { kind: 'NON_NULL', name: null, ofType: { kind: 'SCALAR', name: 'Int', ofType: null } }, 'INPUT', 'number', true],
    ['weight', { kind: 'SCALAR', name: 'Float', ofType: null }, 'INPUT', 'number', false],
    ['pinned', { kind: 'SCALAR', name: 'Boolean', ofType: null }, 'INPUT', 'checkbox', false],
    ['dueAt', { kind: 'SCALAR', name: 'Time', ofType: null }, 'INPUT', 'datetime-local', false],
    ['kind', { kind: 'NON_NULL', name: null, ofType: { kind: 'ENUM', name: 'ItemStatus', ofType: null } }, 'SELECT', 'select-one', true],
    ['checksum', { kind: 'SCALAR', name: 'Cursor', ofType: null }, 'INPUT', 'text', false],
  ];
  const tab = await context.newPage();
  tab.on('pageerror', (e) => problems.push(`second tab: page error: ${e.stack}`));
  // Its anonymous introspection is refused (as when the address's anonymous
  // points are spent): the page asks again with the signed-in token.
  let refused = 0;
  await tab.route(`${base}/graphql`, async (route) => {
    if (!(route.request().postData() || '').includes('AdminSchema')) return route.continue();
    if (!(await route.request().headerValue('authorization'))) {
      refused++;
      return route.fulfill({ status: 429, json: { errors: [{ message: 'rate limit exceeded', extensions: { code: 'RATE_LIMITED' } }] } });
    }
    const res = await route.fetch();
    const json = await res.json();
    const create = json.data.__schema.types.find((t) => t.name === 'CreateItemInput');
    for (const [name, type] of added) create.inputFields.push({ name, description: `the added ${name}`, defaultValue: null, type });
    return route.fulfill({ response: res, json });
  });
  await tab.goto(`${base}/playground`);
  await tab.locator('#api-key').fill(adminKey);
  await tab.locator('#signin button[type=submit]').click();
  await tab.locator('#session').waitFor({ timeout });
  await tab.locator('nav.views').getByRole('button', { name: 'Browse items', exact: true }).click();
  await tab.locator('#item-create .field[data-field="checksum"]').waitFor({ timeout });
  for (const [name, , tag, type, req] of added) {
    const input = tab.locator(`#new-item-${name}`);
    const got = await input.evaluate((i) => ({ tag: i.tagName, type: i.type, required: i.required, label: i.labels[0].textContent }));
    check(got.tag === tag && got.type === type && got.required === req,
      `the added ${name}: ${JSON.stringify(got)}, want a ${tag} of type ${type}${req ? ', required' : ''}`);
  }
  check(await tab.getByLabel('Due at', { exact: true }).count() === 1, 'the added dueAt is not labelled "Due at"');
  check(refused >= 1, 'the second tab did not ask for the schema without a token first');
  console.log(`a field added to CreateItemInput shows in the form as its type says: ${added.map(([n, , , t]) => `${n} ${t}`).join(', ')}`);
  await tab.close();
  check(outside.length === 0, `the pages tried to leave the server:\n  ${outside.join('\n  ')}`);
  check(problems.length === 0, `the pages had errors:\n  ${problems.join('\n  ')}`);
  console.log('one introspection query; no request left the server; no script error or CSP violation');
} catch (e) {
  failed = true;
  console.error(e);
  if (outside.length) console.error(`requests that tried to leave the server:\n  ${outside.join('\n  ')}`);
  if (problems.length) console.error(problems.join('\n'));
  await shot(page, 'items-failed.png').catch(() => {});
  fs.writeFileSync(path.join(outDir, 'items-failed.html'), await page.content().catch(() => ''));
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
