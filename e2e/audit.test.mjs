// The GraphQL-over-HTTP specification's own conformance suite, graphql-http's
// server audit (serverAudits), run against the live server: every audit must
// pass. A failed MUST is an error, a failed SHOULD a warning, and both fail
// this test; a failed MAY is a notice (an optional behaviour the server
// chose otherwise), printed but allowed.
//
// The audits send only introspection ({ __typename }, __type) and a
// `mutation { __typename }` over GET. They run twice: anonymously, which
// works because the server under test has the playground on (anonymous
// introspection), and with ALICE_TOKEN's bearer token added to every request
// by the fetch function the audit takes (fetchFn), as a signed-in client
// would send them.
//
// Started by e2e/audit_test.go (make e2e), which runs the server and passes
// BASE_URL and ALICE_TOKEN.
import { serverAudits } from 'graphql-http';
import { required } from './harness.mjs';

const base = required('BASE_URL');
const token = required('ALICE_TOKEN');

// withToken is fetch with the Authorization header added.
function withToken(input, init = {}) {
  const headers = new Headers(init.headers);
  headers.set('Authorization', `Bearer ${token}`);
  return fetch(input, { ...init, headers });
}

let failed = 0;
let passed = 0;
for (const [who, fetchFn] of [['anonymous', fetch], ['bearer token', withToken]]) {
  // One at a time: the audits are cheap, and their order in the log is
  // then the suite's.
  for (const a of serverAudits({ url: base + '/graphql', fetchFn })) {
    const r = await a.fn();
    if (r.status === 'ok') {
      passed++;
      continue;
    }
    let body = '';
    try {
      body = await r.response.text();
    } catch {
      // the body was read by the assertion already
    }
    console.log(`${who}: ${r.status.toUpperCase()} ${r.id} ${r.name}: ${r.reason} (HTTP ${r.response.status} ${body})`);
    if (r.status === 'notice') {
      passed++;
    } else {
      failed++;
    }
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
