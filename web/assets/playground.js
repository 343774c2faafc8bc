// The itemsvc GraphQL playground: sign in with an API key, then GraphiQL
// sends the token it was exchanged for. The key itself is never kept; the
// token lives in this tab's sessionStorage until it expires or the user
// signs out. Everything here is served by the itemsvc binary (web/assets).
(function () {
  'use strict';

  const endpoint = document.body.dataset.endpoint;
  const tokenKey = 'itemsvc:playground:session';
  const $ = (id) => document.getElementById(id);
  const form = $('signin');
  const keyInput = $('api-key');
  const sessionBox = $('session');
  const message = $('message');
  let expiryTimer = 0;
  let viewer = null; // me { id email role } of the signed-in user
  let current = 'graphiql'; // the view on screen
  const views = {}; // the pages' {open, reset} (admin.js), by name

  // The id the UpdateItem and DeleteItem examples start with; signed in,
  // the playground puts one of the user's items' in its place.
  const idPlaceholder = 'item_…';

  // Example tabs for the usual chores; GraphiQL keeps the user's own tabs
  // in localStorage after the first visit.
  const examples = [
    {
      query: `# Your own items, last changed first, and how many.
query MyItems {
  me {
    email
    role
    items(first: 20, orderBy: {field: UPDATED_AT, direction: DESC}) {
      totalCount
      edges { node { id name status description updatedAt } }
    }
  }
}
`,
    },
    {
      query: `# Items with their owners: an admin sees everyone's.
# Next page: pageInfo.endCursor as variable "after".
query AllItems($after: Cursor) {
  items(first: 50, after: $after, orderBy: {field: CREATED_AT, direction: DESC}) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { node { id name status createdAt owner { email name } } }
  }
}
`,
    },
    {
      query: `# Users and how many items each owns (admins only).
query Users {
  users(first: 50) {
    totalCount
    edges { node { id email name role createdAt items { totalCount } } }
  }
}
`,
    },
    {
      query: `# Create an item you own (status: ACTIVE, the default, or ARCHIVED).
mutation CreateItem($input: CreateItemInput!) {
  createItem(input: $input) { id name description status createdAt }
}
`,
      variables: JSON.stringify({ input: { name: 'Made in the playground', description: 'hello' } }, null, 2),
    },
    {
      query: `# One item by id, with its etag (send it as ifMatch to UpdateItem or
# DeleteItem so that a change made meanwhile is not overwritten). Signed
# in, the id is that of the item changed last; any id from AllItems will do.
query ItemById($id: ID!) {
  item(id: $id) { id name description status etag createdAt updatedAt owner { email } }
}
`,
      variables: JSON.stringify({ id: idPlaceholder }, null, 2),
    },
    {
      query: `# Any object by its id, an item's (item_…) or a user's (user_…);
# nodes(ids: [...]) reads several at once.
query NodeById($id: ID!) {
  node(id: $id) {
    __typename
    id
    ... on Item { name status owner { email } }
    ... on User { email role }
  }
}
`,
      variables: JSON.stringify({ id: idPlaceholder }, null, 2),
    },
    {
      query: `# Change the fields given. Signed in, the id is that of the item
# changed last; any id from AllItems will do.
mutation UpdateItem($id: ID!, $input: UpdateItemInput!) {
  updateItem(id: $id, input: $input) { id name status updatedAt }
}
`,
      variables: JSON.stringify({ id: idPlaceholder, input: { status: 'ARCHIVED' } }, null, 2),
    },
    {
      query: `# Delete an item for good; it answers the id. Signed in, the id is
# that of the item changed last: check it before you run this.
mutation DeleteItem($id: ID!) {
  deleteItem(id: $id)
}
`,
      variables: JSON.stringify({ id: idPlaceholder }, null, 2),
    },
    {
      query: `# What a client does to sign in (the form above does it for you):
# an API key for a bearer token, sent as Authorization: Bearer <token>.
# The only operation that needs no token.
mutation Login($apiKey: String!) {
  login(apiKey: $apiKey) { accessToken tokenType expiresIn }
}
`,
      variables: JSON.stringify({ apiKey: 'paste an API key' }, null, 2),
    },
    {
      query: `# Watch changes live: every item event you may see (an admin: all)
# shows as it happens, until you press stop. Create or change an item in
# another tab, or with curl, to see it come.
subscription ItemEvents {
  itemEvents { id type timestamp item { id name status owner { email } } }
}
`,
    },
  ];

  // notice shows text in a message box (el), as an error or not; no text
  // hides it.
  function notice(el, text, isError) {
    el.textContent = text;
    el.classList.toggle('error', !!isError);
    el.hidden = !text;
  }

  function say(text, isError) {
    notice(message, text, isError);
  }

  // Session: {token, expiresAt} of the signed-in user, in this tab only.
  function session() {
    try {
      const s = JSON.parse(sessionStorage.getItem(tokenKey));
      if (s && typeof s.token === 'string' && s.expiresAt > Date.now()) return s;
    } catch (e) { /* absent or unreadable: signed out */ }
    return null;
  }

  function signedOut(note, isError) {
    sessionStorage.removeItem(tokenKey);
    clearTimeout(expiryTimer);
    sessionBox.hidden = true;
    form.hidden = false;
    say(note || '', isError);
    viewer = null;
    $('points').hidden = true;
    for (const v of Object.values(views)) v.reset();
    showViewButtons();
  }

  function signedIn(me, s) {
    viewer = me;
    $('who').textContent = me.email;
    $('role').textContent = me.role.toLowerCase();
    form.hidden = true;
    sessionBox.hidden = false;
    say('');
    clearStaleRefusal();
    refreshExampleId(true);
    for (const v of Object.values(views)) v.reset();
    showViewButtons();
    if (current !== 'graphiql') show(current);
    clearTimeout(expiryTimer);
    expiryTimer = setTimeout(() => {
      signedOut('Your session has expired: sign in again with your API key.', true);
    }, Math.min(Math.max(0, s.expiresAt - Date.now()), 2 ** 31 - 1)); // setTimeout's longest delay
  }

  // Unreachable is what post throws when no GraphQL answer came back.
  class Unreachable extends Error {}

  // send POSTs one operation, asking for accept, and returns the response;
  // it throws Unreachable when none came (signal: a stop the caller asked
  // for, whose abort it rethrows as it is).
  async function send(body, headers, accept, signal) {
    try {
      const res = await fetch(endpoint, {
        method: 'POST',
        headers: Object.assign({ 'Content-Type': 'application/json', Accept: accept }, headers),
        body: JSON.stringify(body),
        credentials: 'omit',
        signal,
      });
      if (session() && headers && headers.Authorization === bearer(session()).Authorization) points(res.headers);
      return res;
    } catch (e) {
      if (signal && signal.aborted) throw e;
      throw new Unreachable(`GraphQL at ${endpoint} cannot be reached (${e.message}). Is the server running? Reload the page once it is.`);
    }
  }

  // post sends one operation and returns the HTTP status and the decoded
  // GraphQL response; it throws Unreachable when there is none.
  async function post(body, headers) {
    const res = await send(body, headers, 'application/json');
    let json;
    try {
      json = await res.json();
    } catch (e) {
      throw new Unreachable(`GraphQL at ${endpoint} answered HTTP ${res.status} without a GraphQL response. Reload the page, or check the server's log.`);
    }
    return { status: res.status, json };
  }

  function firstError(json) {
    return (json && Array.isArray(json.errors) && json.errors[0]) || null;
  }

  function describe(err) {
    const code = err.extensions && err.extensions.code;
    if (code === 'RATE_LIMITED') {
      const when = rate.reset ? ` until ${rate.reset.toLocaleTimeString()}` : '';
      return `Rate limit reached: no points left${when}. ${err.message} (${code})`;
    }
    return code ? `${err.message} (${code})` : err.message;
  }

  // The signed-in key's rate-limit window, as the X-RateLimit-* headers of
  // its last response told it: shown in the bar, and in what a
  // RATE_LIMITED refusal says.
  const rate = { limit: null, remaining: null, reset: null };

  // points reads the window from a response's headers (a request let
  // through unchecked has none: the display stays as it was).
  function points(headers) {
    const limit = headers.get('X-RateLimit-Limit');
    const remaining = headers.get('X-RateLimit-Remaining');
    const reset = headers.get('X-RateLimit-Reset');
    if (limit === null || remaining === null) return;
    rate.limit = Number(limit);
    rate.remaining = Number(remaining);
    rate.reset = reset ? new Date(Number(reset) * 1000) : null;
    const el = $('points');
    el.textContent = `${rate.remaining} of ${rate.limit} points left` +
      (rate.reset ? `, reset at ${rate.reset.toLocaleTimeString()}` : '');
    el.classList.toggle('low', rate.remaining <= rate.limit / 10);
    el.title = 'The signed-in key\'s rate limit: every request spends points (a mutation or a filtered list more)';
    el.hidden = false;
  }

  function bearer(s) {
    return { Authorization: `Bearer ${s.token}` };
  }

  // rejected handles a 401 to a request that carried our token: it expired
  // or its key was revoked, so the user has to sign in again.
  function rejected(status, err) {
    if (status !== 401 || !session()) return false;
    const code = err && err.extensions && err.extensions.code;
    if (code === 'TOKEN_EXPIRED') {
      signedOut('Your session has expired: sign in again with your API key.', true);
    } else {
      signedOut(`The server no longer accepts your token${err ? `: ${describe(err)}` : ''}. Sign in again.`, true);
    }
    return true;
  }

  // showViewer asks who the token belongs to and shows it.
  async function showViewer(s) {
    const r = await post({ query: 'query Me { me { id email role } }' }, bearer(s));
    const err = firstError(r.json);
    if (rejected(r.status, err)) return;
    if (err || !r.json.data) {
      signedOut(`Signed in, but reading who you are failed: ${err ? describe(err) : `HTTP ${r.status}`}`, true);
      return;
    }
    signedIn(r.json.data.me, s);
  }

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const apiKey = keyInput.value.trim();
    if (!apiKey) {
      say('Paste an API key (sk_live_…) first.', true);
      return;
    }
    const button = form.querySelector('button');
    button.disabled = true;
    say('Signing in…');
    try {
      const r = await post({
        query: 'mutation Login($apiKey: String!) { login(apiKey: $apiKey) { accessToken expiresIn } }',
        variables: { apiKey },
        operationName: 'Login',
      });
      const err = firstError(r.json);
      if (err || !r.json.data || !r.json.data.login) {
        say(`Sign-in failed: ${err ? describe(err) : `HTTP ${r.status}`}`, true);
        keyInput.select();
        return;
      }
      keyInput.value = '';
      const s = { token: r.json.data.login.accessToken, expiresAt: Date.now() + r.json.data.login.expiresIn * 1000 };
      sessionStorage.setItem(tokenKey, JSON.stringify(s));
      await showViewer(s);
    } catch (e) {
      say(e instanceof Unreachable ? e.message : `Sign-in failed: ${e.message}`, true);
    } finally {
      button.disabled = false;
    }
  });

  $('signout').addEventListener('click', () => {
    signedOut('Signed out: this tab has forgotten the token, and the playground every API key and token its tabs kept.');
    forgetCredentials();
    keyInput.focus();
  });

  // credential matches an API key or a token (a JWT) in any text.
  const credential = /sk_(?:live|test)_[A-Za-z0-9]+|eyJ[\w-]*\.[\w-]*\.[\w-]*/g;
  const scrub = (text) => (typeof text === 'string' ? text.replace(credential, 'paste an API key') : text);

  // graphiqlStorage is GraphiQL's localStorage with every credential taken
  // out of what it writes: a key pasted into a tab works in that tab, but
  // is never kept in the browser (GraphiQL also writes some of its state
  // later, on a timer, which a clean-up at sign-out could not catch).
  const graphiqlPrefix = 'graphiql:';
  const graphiqlStorage = {
    getItem: (k) => localStorage.getItem(k),
    setItem: (k, v) => localStorage.setItem(k, scrub(v)),
    removeItem: (k) => localStorage.removeItem(k),
    get length() {
      return Object.keys(localStorage).filter((k) => k.startsWith(graphiqlPrefix)).length;
    },
    clear() {
      for (const k of Object.keys(localStorage)) if (k.startsWith(graphiqlPrefix)) localStorage.removeItem(k);
    },
  };

  // forgetCredentials takes every API key and token out of what the page
  // keeps in the browser (GraphiQL's tabs in localStorage, written before
  // graphiqlStorage scrubbed them, by an older page) and out of GraphiQL's
  // memory: it is unmounted, the stores are scrubbed, and it is mounted
  // again on what is left; the tabs keep their text, with each credential
  // replaced by a placeholder.
  function forgetCredentials() {
    if (graphiqlRoot) graphiqlRoot.unmount();
    for (const store of [localStorage, sessionStorage]) {
      for (let i = store.length - 1; i >= 0; i--) {
        const k = store.key(i);
        const v = store.getItem(k);
        const scrubbed = scrub(v);
        if (scrubbed !== v) store.setItem(k, scrubbed);
      }
    }
    if (graphiqlRoot) mountGraphiQL();
  }

  // fetcher is GraphiQL's: it adds the token unless the headers editor sets
  // an Authorization of its own, and says so when the server is away.
  async function fetcher(params, opts) {
    const headers = Object.assign({}, opts && opts.headers);
    const s = session();
    const own = Object.keys(headers).some((k) => k.toLowerCase() === 'authorization');
    if (s && !own) Object.assign(headers, bearer(s));
    // Right after a tab switch GraphiQL 4 may still send the previous tab's
    // operation name, which the server refuses ("operation … not found"):
    // replace a name the document does not define by the one it does.
    if (params.operationName && typeof params.query === 'string') {
      const ops = operationNames(params.query);
      if (!ops.includes(params.operationName)) {
        params = Object.assign({}, params, { operationName: ops.length === 1 ? ops[0] : undefined });
      }
    }
    if (operationType(params) === 'subscription') return stream(params, headers);
    try {
      const r = await post(params, headers);
      if (message.dataset.unreachable) {
        delete message.dataset.unreachable;
        say('');
      }
      if (s && !own) rejected(r.status, firstError(r.json));
      if (s && r.json && r.json.data && operationType(params) === 'mutation') {
        if (typeof r.json.data.deleteItem === 'string') spentIds.add(r.json.data.deleteItem);
        refreshExampleId(false); // the item changed last may be another now
      }
      return r.json;
    } catch (e) {
      if (!(e instanceof Unreachable)) throw e;
      message.dataset.unreachable = '1';
      say(e.message, true);
      return { errors: [{ message: e.message }] };
    }
  }

  // clearStaleRefusal empties GraphiQL's results pane when it shows a
  // refusal for want of a (valid) token: after signing in it no longer holds.
  function clearStaleRefusal() {
    const el = document.querySelector('.graphiql-response .CodeMirror');
    if (el && /"code": "(UNAUTHORIZED|TOKEN_EXPIRED)"/.test(el.CodeMirror.getValue())) el.CodeMirror.setValue('');
  }

  // Example ids: exampleId is the id of the item the signed-in user may see
  // that changed last (looked up on sign-in and after each mutation); it
  // takes the place of the placeholder, or of an id deleted since, in the
  // variables of the tab GraphiQL shows.
  let exampleId = '';
  const spentIds = new Set([idPlaceholder]);

  // refreshExampleId looks exampleId up again; now fills it into the tab
  // on screen at once (on sign-in), otherwise it waits for a tab switch
  // (after a mutation, whose tab must not turn to another item by itself).
  async function refreshExampleId(now) {
    const s = session();
    if (!s) return;
    try {
      const r = await post({
        query: 'query ExampleItem { items(first: 1, orderBy: {field: UPDATED_AT, direction: DESC}) { edges { node { id } } } }',
        operationName: 'ExampleItem',
      }, bearer(s));
      const edges = r.json.data ? r.json.data.items.edges : [];
      exampleId = edges.length ? edges[0].node.id : '';
    } catch (e) {
      return; // the examples keep their placeholder
    }
    if (now) fillExampleIds();
  }

  // variablesEditor is the CodeMirror of GraphiQL's variables editor (the
  // first of its tools; headers come second), once it has one; it fills
  // example ids into each tab GraphiQL loads into it.
  function variablesEditor() {
    const el = document.querySelector('.graphiql-editor-tool > .graphiql-editor:first-child .CodeMirror');
    const cm = el && el.CodeMirror;
    if (cm && !cm.itemsvcFills) {
      cm.itemsvcFills = true;
      cm.on('change', (_, change) => {
        if (!change || change.origin === 'setValue') fillExampleIds(); // GraphiQL also signals bare changes
      });
    }
    return cm;
  }

  function fillExampleIds() {
    const cm = variablesEditor();
    if (!cm || !exampleId || !session()) return;
    const text = cm.getValue();
    const filled = text.replace(/("id"\s*:\s*")([^"]*)"/g, (m, key, id) => (spentIds.has(id) ? `${key}${exampleId}"` : m));
    if (filled !== text) cm.setValue(filled);
  }

  // operationType is the type (query, mutation, subscription) of the
  // operation params runs: the one named, or the document's only one.
  function operationType(params) {
    if (typeof params.query !== 'string') return 'query';
    const ops = Array.from(bare(params.query).matchAll(/(?:^|\})\s*(query|mutation|subscription)\b\s*([_A-Za-z][_0-9A-Za-z]*)?/g),
      (m) => ({ type: m[1], name: m[2] }));
    const op = ops.find((o) => params.operationName && o.name === params.operationName) || (ops.length === 1 ? ops[0] : null);
    return op ? op.type : 'query';
  }

  // stream runs a subscription over Server-Sent Events (a POST asking for
  // text/event-stream, with the same token and price as any client) and
  // hands GraphiQL each event as it comes, until the stream ends or the
  // user presses stop, which closes the connection at once.
  function stream(params, headers) {
    const ctrl = new AbortController();
    const events = streamEvents(params, headers, ctrl.signal);
    return {
      [Symbol.asyncIterator]() { return this; },
      next: () => events.next(),
      return: (value) => {
        ctrl.abort();
        return Promise.resolve({ done: true, value });
      },
    };
  }

  async function* streamEvents(params, headers, signal) {
    let res;
    try {
      res = await send(params, headers, 'text/event-stream', signal);
    } catch (e) {
      if (!(e instanceof Unreachable)) return; // stopped before it opened
      say(e.message, true);
      yield { errors: [{ message: e.message }] };
      return;
    }
    if (!(res.headers.get('Content-Type') || '').startsWith('text/event-stream')) {
      // Refused before the stream opened (a bad token, a price over the
      // limit): a GraphQL response of its own.
      let json;
      try {
        json = await res.json();
      } catch (e) {
        json = { errors: [{ message: `HTTP ${res.status} without a GraphQL response` }] };
      }
      yield json;
      return;
    }
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buf += value.replace(/\r\n?/g, '\n');
        for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
          const frame = buf.slice(0, i);
          buf = buf.slice(i + 2);
          let event = 'message';
          const data = [];
          for (const line of frame.split('\n')) {
            if (line.startsWith('event:')) event = line.slice(6).trim();
            else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
          }
          if (event === 'complete') return;
          if (event === 'next' && data.length) yield JSON.parse(data.join('\n'));
        }
      }
    } catch (e) {
      if (!signal.aborted) throw e;
    } finally {
      reader.cancel().catch(() => {});
    }
  }

  // bare is a GraphQL document with its comments and strings blanked out,
  // so that keywords inside them are not read as the document's own.
  function bare(doc) {
    return doc.replace(/"""[\s\S]*?"""|"(?:[^"\\\n]|\\.)*"|#[^\n]*/g, ' ');
  }

  // ask runs one operation with the session's token and returns its data;
  // it throws an Error saying what went wrong, with the GraphQL error's
  // code as .code and the input field it names (extensions.field) as
  // .field.
  async function ask(query, variables) {
    const s = session();
    if (!s) throw new Error('Sign in first: what you see is what your API key may see.');
    const r = await post({ query, variables }, bearer(s));
    const err = firstError(r.json);
    if (rejected(r.status, err)) throw new Error(`The server no longer accepts your token${err ? `: ${describe(err)}` : ''}. Sign in again.`);
    if (err || !r.json.data) {
      const e = new Error(err ? describe(err) : `HTTP ${r.status}`);
      e.code = err && err.extensions && err.extensions.code;
      e.field = err && err.extensions && err.extensions.field;
      throw e;
    }
    return r.json.data;
  }

  // download GETs path (a REST route that answers a file, such as a
  // backup's download_path) with the session's token, which a link cannot
  // send, and returns the file as a Blob with the name the server gave it
  // (Content-Disposition). A refusal throws an Error with its code.
  async function download(path) {
    const s = session();
    if (!s) throw new Error('Sign in first: what you see is what your API key may see.');
    let res;
    try {
      res = await fetch(path, { headers: bearer(s), credentials: 'omit' });
    } catch (e) {
      throw new Unreachable(`${path} cannot be reached (${e.message}). Is the server running?`);
    }
    points(res.headers);
    if (!res.ok) {
      let err = null;
      try { err = (await res.json()).error; } catch (e) { /* not the envelope */ }
      if (res.status === 401) rejected(401, err && { message: err.message, extensions: { code: err.code } });
      const e = new Error(err ? `${err.message} (${err.code})` : `HTTP ${res.status}`);
      e.code = err && err.code;
      throw e;
    }
    const m = /filename="([^"]+)"/.exec(res.headers.get('Content-Disposition') || '');
    return { blob: await res.blob(), name: m ? m[1] : path.split('/').pop() };
  }

  // operationNames lists the named operations of a GraphQL document.
  function operationNames(doc) {
    return Array.from(bare(doc).matchAll(/\b(?:query|mutation|subscription)\s+([_A-Za-z][_0-9A-Za-z]*)/g), (m) => m[1]);
  }


  // show switches to a view: GraphiQL or one of the pages admin.js
  // registers (the items, the event history, the admin pages).
  function show(name) {
    current = name;
    for (const b of document.querySelectorAll('.views button')) {
      const v = b.id.replace(/^view-/, '');
      b.setAttribute('aria-pressed', String(v === name));
      $(v).hidden = v !== name;
    }
    if (views[name]) views[name].open();
  }
  for (const b of document.querySelectorAll('.views button')) {
    b.addEventListener('click', () => show(b.id.replace(/^view-/, '')));
  }

  // showViewButtons shows the admin pages' buttons to those who may use
  // them: Keys and Webhooks to anyone signed in, Users and Audit to admins.
  // A page whose button goes away goes with it.
  function showViewButtons() {
    for (const b of document.querySelectorAll('.views [data-signed-in]')) b.hidden = !viewer;
    for (const b of document.querySelectorAll('.views [data-admin]')) b.hidden = !viewer || viewer.role !== 'ADMIN';
    if ($(`view-${current}`).hidden) show('graphiql');
  }

  // The admin pages (admin.js) use the page's session through this: the
  // same token, rate-limit display and sign-out on a refused token.
  window.itemsvcPlayground = {
    ask,
    // subscribe runs a subscription over Server-Sent Events with the
    // session's token and yields each message ({data} or {errors}) until
    // the stream ends or signal aborts it.
    subscribe(query, variables, signal) {
      const s = session();
      if (!s) throw new Error('Sign in first: what you see is what your API key may see.');
      return streamEvents({ query, variables }, bearer(s), signal);
    },
    // spent tells the example tabs that an item was deleted (its id is
    // replaced in their variables).
    spent: (id) => spentIds.add(id),
    download,
    notice,
    describe,
    show,
    viewer: () => viewer,
    register(name, view) {
      views[name] = view;
      if (current === name && viewer) view.open();
    },
  };

  function start() {
    if (!window.React || !window.ReactDOM || !window.GraphiQL) {
      $('graphiql').textContent = "The playground's scripts (GraphiQL, React) did not load from this server's /assets/. Reload the page; if that does not help, check the server's log.";
      $('graphiql').className = 'failed';
      return;
    }
    const s = session();
    if (s) {
      showViewer(s).catch((e) => signedOut(e.message, true));
    } else {
      signedOut(sessionStorage.getItem(tokenKey) ? 'Your session has expired: sign in again with your API key.' : '', true);
    }
    $('graphiql').addEventListener('click', variablesEditor); // hooks example ids onto the editor
    mountGraphiQL();
  }

  // graphiqlRoot is GraphiQL's React root, once mounted (forgetCredentials
  // mounts it afresh).
  let graphiqlRoot = null;

  function mountGraphiQL() {
    graphiqlRoot = ReactDOM.createRoot($('graphiql'));
    graphiqlRoot.render(React.createElement(GraphiQL, {
      fetcher,
      // GraphiQL's point-and-click query builder, when its bundle loaded.
      plugins: window.GraphiQLPluginExplorer ? [GraphiQLPluginExplorer.explorerPlugin()] : [],
      defaultTabs: examples,
      defaultEditorToolsVisibility: true,
      isHeadersEditorEnabled: true,
      shouldPersistHeaders: false,
      storage: graphiqlStorage,
    }));
  }

  start();
})();
