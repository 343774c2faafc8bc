// Real-client test of the event streams: the graphql-ws npm client (over
// the ws package, Node having no WebSocket of its own here) subscribes to
// itemEvents, and the browser's own EventSource, in chromium driven by
// playwright-core, follows GET /v1/events/stream. Both must receive the
// created, updated and deleted events of Alice's changes made through REST
// and GraphQL, never Bob's; then each is killed, changes are made, and a
// new client started with the last id it saw must receive exactly those.
//
// Started by e2e/realtime_test.go (make e2e), which runs the server and
// passes BASE_URL, ALICE_TOKEN, BOB_TOKEN, and AFTER (the id of an event
// committed before the test: both clients start after it, so none of the
// test's events can slip past before a subscription is registered).
// CHROMIUM overrides /usr/bin/chromium. Offline: the browser may reach the
// test server only.
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { required, check, launchChromium } from './harness.mjs';

const base = required('BASE_URL');
const alice = required('ALICE_TOKEN');
const bob = required('BOB_TOKEN');
const after = required('AFTER');
const timeout = 15_000;

async function rest(token, method, path, body) {
  const res = await fetch(base + path, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body && JSON.stringify(body),
  });
  const json = await res.json();
  check(res.ok, `${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

async function gql(token, query, variables) {
  const res = await fetch(base + '/graphql', {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const json = await res.json();
  check(res.ok && !json.errors, `graphql: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

// waitFor polls cond until it holds; it fails the test after timeout.
async function waitFor(what, cond) {
  const end = Date.now() + timeout;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// A graphql-ws subscription to itemEvents after an id; received events
// land in the returned array.
function subscribeWS(afterId) {
  const client = createClient({
    url: base.replace(/^http/, 'ws') + '/graphql',
    webSocketImpl: WebSocket,
    connectionParams: { Authorization: `Bearer ${alice}` },
    retryAttempts: 0,
  });
  const got = [];
  const errors = [];
  client.subscribe(
    {
      query: 'subscription($after: ID) { itemEvents(after: $after) { id type timestamp item { id name userID } } }',
      variables: { after: afterId },
    },
    {
      next: (r) => (r.errors ? errors.push(r.errors) : got.push(r.data.itemEvents)),
      error: (e) => errors.push(e),
      complete: () => {},
    },
  );
  return { got, errors, kill: () => client.terminate() };
}

const browser = await launchChromium();
const context = await browser.newContext();
const outside = [];
await context.route('**/*', (route) => {
  const url = new URL(route.request().url());
  if (['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) return route.continue();
  outside.push(url.href);
  return route.abort('internetdisconnected');
});
const page = await context.newPage();
const problems = [];
page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
let failed = false;

// The browser's EventSource after an id, on a page of the server (its
// CSP allows connect-src 'self'); events collect in window.__events.
async function openEventSource(afterId) {
  await page.evaluate(({ token, afterId }) => {
    window.__events = [];
    window.__source = new EventSource(`/v1/events/stream?access_token=${encodeURIComponent(token)}&after=${afterId}`);
    for (const type of ['item.created', 'item.updated', 'item.deleted']) {
      window.__source.addEventListener(type, (e) => {
        const body = JSON.parse(e.data);
        window.__events.push({ id: e.lastEventId, type: body.event, name: body.data.name, userId: body.data.user_id });
      });
    }
  }, { token: alice, afterId });
}
const browserEvents = () => page.evaluate(() => window.__events);

try {
  await page.goto(base + '/docs');
  await openEventSource(after);
  const ws = subscribeWS(after);

  // Changes through both APIs, and one of Bob's that must reach neither.
  const a = await rest(alice, 'POST', '/v1/items', { name: 'rest item' });
  await rest(bob, 'POST', '/v1/items', { name: "bob's item" });
  await gql(alice, 'mutation($id: ID!) { updateItem(id: $id, input: {name: "renamed by graphql"}) { id } }', { id: a.id });
  await rest(alice, 'DELETE', `/v1/items/${a.id}`);
  const g = await gql(alice, 'mutation { createItem(input: {name: "graphql item"}) { id } }');

  const want = ['item.created:rest item', 'item.updated:renamed by graphql', 'item.deleted:renamed by graphql', 'item.created:graphql item'];
  const wsWant = ['CREATED:rest item', 'UPDATED:renamed by graphql', 'DELETED:renamed by graphql', 'CREATED:graphql item'];
  await waitFor('graphql-ws events', () => ws.got.length >= 4 || ws.errors.length > 0);
  check(ws.errors.length === 0, `graphql-ws errors: ${JSON.stringify(ws.errors)}`);
  await waitFor('EventSource events', async () => (await browserEvents()).length >= 4);
  const wsGot = ws.got.map((e) => `${e.type}:${e.item.name}`);
  const esGot = (await browserEvents()).map((e) => `${e.type}:${e.name}`);
  check(JSON.stringify(wsGot) === JSON.stringify(wsWant), `graphql-ws got ${JSON.stringify(wsGot)}`);
  check(JSON.stringify(esGot) === JSON.stringify(want), `EventSource got ${JSON.stringify(esGot)}`);
  check(ws.got.every((e) => !e.item.name.startsWith('bob')), 'graphql-ws got one of Bob\'s events');

  // Kill both clients after what they saw, change things meanwhile, and
  // start new ones from their last ids: exactly the missed events follow.
  const wsLast = ws.got[ws.got.length - 1].id;
  const esLast = (await browserEvents()).at(-1).id;
  check(wsLast === esLast, `clients disagree on the last id: ${wsLast} ${esLast}`);
  ws.kill();
  await page.evaluate(() => window.__source.close());
  await rest(alice, 'PUT', `/v1/items/${g.createItem.id}`, { name: 'missed 1' });
  await gql(alice, 'mutation { createItem(input: {name: "missed 2"}) { id } }');
  await rest(bob, 'POST', '/v1/items', { name: "bob's second" });

  const ws2 = subscribeWS(wsLast);
  await openEventSource(esLast);
  await rest(alice, 'POST', '/v1/items', { name: 'live again' });
  const want2 = ['item.updated:missed 1', 'item.created:missed 2', 'item.created:live again'];
  await waitFor('resumed graphql-ws events', () => ws2.got.length >= 3 || ws2.errors.length > 0);
  await waitFor('resumed EventSource events', async () => (await browserEvents()).length >= 3);
  const ws2Got = ws2.got.map((e) => `${e.type}:${e.item.name}`);
  const es2Got = (await browserEvents()).map((e) => `${e.type}:${e.name}`);
  check(JSON.stringify(ws2Got) === JSON.stringify(['UPDATED:missed 1', 'CREATED:missed 2', 'CREATED:live again']), `resumed graphql-ws got ${JSON.stringify(ws2Got)}`);
  check(JSON.stringify(es2Got) === JSON.stringify(want2), `resumed EventSource got ${JSON.stringify(es2Got)}`);
  // Nothing more (no duplicate) arrives by the time another change does.
  await rest(alice, 'POST', '/v1/items', { name: 'sentinel' });
  await waitFor('sentinel', async () => ws2.got.length >= 4 && (await browserEvents()).length >= 4);
  check(ws2.got.length === 4 && ws2.got[3].item.name === 'sentinel', `graphql-ws extra events: ${JSON.stringify(ws2.got)}`);
  check((await browserEvents()).length === 4, 'EventSource extra events');
  ws2.kill();
  check(outside.length === 0, `requests left the server: ${outside.join(', ')}`);
  check(problems.length === 0, problems.join('\n'));
  console.log('realtime: graphql-ws and EventSource received, resumed, and never saw Bob\'s events');
} catch (e) {
  failed = true;
  console.error(e);
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
