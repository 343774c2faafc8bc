// The playground's pages beside GraphiQL: the items (columns, sorting,
// filters, detail view and forms built from the schema), the event
// history, users, API keys, webhooks with their deliveries, the audit
// trail, backups and the server's health. They run on the playground's
// sign-in (playground.js hands them its ask, which sends the tab's token,
// and its subscribe) and use the same GraphQL
// fields as any client, each query a small one: a page of 20 read when it
// is shown or paged to, never on a timer, so that clicking around does not
// spend the key's rate limit (the health page polls /metrics, which costs
// no points). A failure shows beside the control that was used.
(function () {
  'use strict';

  const pg = window.itemsvcPlayground;
  if (!pg) return; // playground.js did not run; it says why
  const { ask, notice } = pg;
  const S = window.itemsvcSchema; // schema.js: the schema, read once per page load
  const $ = (id) => document.getElementById(id);
  const pageSize = 20;

  // el makes an element with properties (attributes for names with a dash
  // or role/aria) and children.
  function el(tag, props, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (k.includes('-') || k === 'role') e.setAttribute(k, v);
      else e[k] = v;
    }
    e.append(...children.filter((c) => c !== null && c !== undefined));
    return e;
  }

  function cell(text, title) {
    const td = el('td', {}, text === null || text === undefined ? '—' : String(text));
    if (title) td.title = title;
    return td;
  }

  function button(text, label, onClick) {
    const b = el('button', { type: 'button', 'aria-label': label }, text);
    b.addEventListener('click', () => onClick(b));
    return b;
  }

  function when(t) {
    return t ? new Date(t).toLocaleString() : null;
  }

  // inline shows text (an error) in a span right after anchor, making one
  // the first time; no text hides it.
  function inline(anchor, text) {
    let span = anchor.nextElementSibling;
    if (!span || !span.classList.contains('inline-error')) {
      span = el('span', { className: 'inline-error', role: 'alert' });
      anchor.after(span);
    }
    notice(span, text, true);
  }

  // act runs fn for the control the user pressed: the control is disabled
  // meanwhile and a failure is shown beside it (or beside the input named
  // by the error's field, from fields). It returns whether fn succeeded.
  async function act(control, fn, fields) {
    inline(control, '');
    for (const f of Object.values(fields || {})) inline(f, '');
    control.disabled = true;
    try {
      await fn();
      return true;
    } catch (e) {
      const input = e.field && fields && fields[e.field];
      inline(input || control, e.message);
      if (input) input.focus();
      return false;
    } finally {
      control.disabled = false;
    }
  }

  // pager draws Previous, the page number and Next into nav; read(after)
  // reads and draws the page after that cursor and returns its pageInfo,
  // or throws, leaving the page on screen as it was.
  function pager(nav, read) {
    const prev = button('Previous', 'Previous page', (b) => move(-1, b));
    const next = button('Next', 'Next page', (b) => move(1, b));
    const info = el('span', { 'aria-live': 'polite' });
    nav.replaceChildren(prev, info, next);
    let after = null;
    let back = [];
    let info0 = { hasNextPage: false, endCursor: null };

    function draw() {
      prev.disabled = back.length === 0;
      next.disabled = !info0.hasNextPage;
      info.textContent = `page ${back.length + 1}`;
    }

    async function move(dir, control) {
      const target = dir > 0 ? info0.endCursor : back[back.length - 1];
      await act(control, async () => {
        info0 = await read(target);
        if (dir > 0) back.push(after);
        else back.pop();
        after = target;
      });
      draw();
    }

    // reload reads the page on screen again; first, the first page.
    async function reload(first) {
      if (first) {
        after = null;
        back = [];
      }
      info0 = await read(after);
      draw();
    }

    function reset() {
      after = null;
      back = [];
      info0 = { hasNextPage: false, endCursor: null };
      info.textContent = '';
      prev.disabled = true;
      next.disabled = true;
    }
    reset();
    return { reload, reset };
  }

  // secretBox shows a secret once in box (an input to copy from, a Copy
  // button, a warning), until "I have copied it" clears it.
  function secretBox(prefix) {
    const box = $(`${prefix}-secret`);
    const value = $(`${prefix}-secret-value`);
    const copied = $(`${prefix}-secret-copied`);
    $(`${prefix}-secret-copy`).addEventListener('click', async () => {
      value.select();
      try {
        await navigator.clipboard.writeText(value.value);
        copied.textContent = 'Copied to the clipboard.';
      } catch (e) {
        copied.textContent = 'The browser refused the clipboard: it is selected, press Ctrl+C (⌘C).';
      }
    });
    function hide() {
      value.value = '';
      copied.textContent = '';
      box.hidden = true;
    }
    $(`${prefix}-secret-done`).addEventListener('click', hide);
    return {
      show(secret) {
        value.value = secret;
        copied.textContent = '';
        box.hidden = false;
        value.focus();
        value.select();
      },
      hide,
    };
  }

  // people is the users an admin may pick from (owners of keys, actors of
  // the audit trail), read once per sign-in: their first 100 by email.
  let peoplePromise = null;
  function people() {
    if (!peoplePromise) {
      peoplePromise = ask('query AdminPeople { users(first: 100, orderBy: {field: EMAIL, direction: ASC}) { edges { node { id email } } } }')
        .then((d) => d.users.edges.map((e) => e.node));
      peoplePromise.catch(() => { peoplePromise = null; });
    }
    return peoplePromise;
  }

  function option(value, text) {
    return el('option', { value }, text);
  }

  // ---- Users (admins) ----
  const users = (function usersPage() {
    const rows = $('users-rows');
    const note = $('users-message');
    const filters = { role: $('users-role'), disabled: $('users-disabled'), email: $('users-email') };
    const fields = 'id email name role disabled createdAt';
    const q = {
      list: `query AdminUsers($after: Cursor, $where: UserWhereInput) {
  users(first: ${pageSize}, after: $after, where: $where, orderBy: {field: EMAIL, direction: ASC}) {
    pageInfo { hasNextPage endCursor }
    edges { node { ${fields} } }
  }
}`,
      create: `mutation AdminCreateUser($input: CreateUserInput!) { createUser(input: $input) { ${fields} } }`,
      update: `mutation AdminUpdateUser($id: ID!, $input: UpdateUserInput!) { updateUser(id: $id, input: $input) { ${fields} } }`,
    };

    function where() {
      const w = {};
      if (filters.role.value) w.role = filters.role.value;
      if (filters.disabled.value) w.disabled = filters.disabled.value === 'true';
      if (filters.email.value.trim()) w.emailHasPrefix = filters.email.value.trim().toLowerCase();
      return w;
    }

    const pages = pager(document.querySelector('#users .pager'), async (after) => {
      const d = await ask(q.list, { after, where: where() });
      rows.replaceChildren(...d.users.edges.map((e) => row(e.node)));
      notice(note, d.users.edges.length ? '' : 'No users match.');
      return d.users.pageInfo;
    });

    function row(u) {
      const tr = el('tr', { 'data-id': u.id });
      const me = pg.viewer() && pg.viewer().id === u.id;
      const other = u.role === 'ADMIN' ? 'USER' : 'ADMIN';
      tr.append(cell(u.email), cell(u.name), cell(u.role.toLowerCase()), cell(u.disabled ? 'disabled' : 'enabled'),
        cell(when(u.createdAt), u.createdAt),
        el('td', { className: 'actions' },
          button(other === 'ADMIN' ? 'Make admin' : 'Make user', `Make ${u.email} ${other.toLowerCase()}`,
            (b) => (other === 'ADMIN'
              ? confirmChange(tr, u, { role: other }, `Make ${u.email} an admin? They may then change every user, key and webhook.`, 'Yes, make admin')
              : change(tr, u, { role: other }, b))),
          button(u.disabled ? 'Enable' : 'Disable', `${u.disabled ? 'Enable' : 'Disable'} ${u.email}`,
            (b) => (u.disabled
              ? change(tr, u, { disabled: false }, b)
              : confirmChange(tr, u, { disabled: true }, `Disable ${u.email}? Their keys and tokens stop working within seconds.`, 'Yes, disable'))),
          button('Keys', `Keys of ${u.email}`, () => keys.of(u.id))));
      if (me) tr.classList.add('me');
      return tr;
    }

    // confirmChange asks in the row itself before a change that gives
    // rights or takes them away (Make admin, Disable), as Revoke and
    // Delete do; Keep puts the row back as it was.
    function confirmChange(tr, u, input, question, yesText) {
      const actions = tr.querySelector('.actions');
      const yes = button(yesText, `${yesText}: ${u.email}`, (b) => change(tr, u, input, b));
      actions.replaceChildren(el('span', { className: 'confirm' }, question), yes,
        button('Keep', `Keep ${u.email} as is`, () => { const fresh = row(u); tr.replaceWith(fresh); fresh.querySelector('.actions button').focus(); }));
      yes.focus();
    }

    async function change(tr, u, input, control) {
      let fresh = null;
      await act(control, async () => {
        fresh = (await ask(q.update, { id: u.id, input })).updateUser;
      });
      if (!fresh) return;
      const at = Array.from(tr.querySelectorAll('.actions button')).indexOf(control);
      const next = row(fresh);
      tr.replaceWith(next);
      notice(note, `Saved ${fresh.email}: ${fresh.role.toLowerCase()}, ${fresh.disabled ? 'disabled' : 'enabled'}.`);
      // Focus stays where it was: on the button that took the pressed one's place.
      next.querySelectorAll('.actions button')[Math.max(0, at)].focus();
    }

    const createForm = $('user-create');
    const inputs = { email: $('new-user-email'), name: $('new-user-name'), role: $('new-user-role') };
    createForm.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const submit = createForm.querySelector('button[type=submit]');
      let made = null;
      await act(submit, async () => {
        made = (await ask(q.create, { input: { email: inputs.email.value.trim(), name: inputs.name.value.trim(), role: inputs.role.value } })).createUser;
      }, inputs);
      if (!made) return;
      peoplePromise = null; // the pickers should offer the new user
      rows.prepend(row(made));
      rows.firstChild.classList.add('fresh');
      notice(note, `Created ${made.email} (${made.role.toLowerCase()}).`);
      inputs.email.value = '';
      inputs.name.value = '';
      inputs.email.focus();
    });

    $('users-filters').addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const submit = ev.target.querySelector('button[type=submit]');
      await act(submit, () => pages.reload(true), { email: filters.email, role: filters.role, disabled: filters.disabled });
    });
    for (const s of [filters.role, filters.disabled]) {
      s.addEventListener('change', () => act(s, () => pages.reload(true)));
    }

    return {
      async open() {
        try {
          await pages.reload(true);
        } catch (e) {
          notice(note, e.message, true);
        }
      },
      reset() {
        peoplePromise = null; // another sign-in may see other users
        rows.replaceChildren();
        pages.reset();
        notice(note, '');
      },
    };
  })();

  // ---- API keys: one's own, or (admins) any user's ----
  const keys = (function keysPage() {
    const rows = $('keys-rows');
    const note = $('keys-message');
    const owner = $('keys-owner');
    const fields = 'id userID label prefix scopes createdAt lastUsedAt expiresAt revokedAt rateLimitPerMinute rateLimitPerHour';
    const q = {
      list: `query AdminKeys($userID: ID, $after: Cursor) {
  apiKeys(userID: $userID, after: $after, first: ${pageSize}) {
    pageInfo { hasNextPage endCursor }
    edges { node { ${fields} } }
  }
}`,
      create: `mutation AdminCreateKey($input: CreateAPIKeyInput!) { createAPIKey(input: $input) { ${fields} key } }`,
      revoke: `mutation AdminRevokeKey($id: ID!) { revokeAPIKey(id: $id) { ${fields} } }`,
      update: `mutation AdminUpdateKey($id: ID!, $input: UpdateAPIKeyInput!) { updateAPIKey(id: $id, input: $input) { ${fields} } }`,
    };
    const secret = secretBox('key');
    let userID = null; // whose keys: null, the signed-in user's

    const pages = pager(document.querySelector('#keys .pager'), async (after) => {
      const d = await ask(q.list, { userID, after });
      rows.replaceChildren(...d.apiKeys.edges.map((e) => row(e.node)));
      notice(note, d.apiKeys.edges.length ? '' : 'No keys.');
      return d.apiKeys.pageInfo;
    });

    const isAdmin = () => pg.viewer() && pg.viewer().role === 'ADMIN';

    function limits(k) {
      const m = k.rateLimitPerMinute === null ? 'default' : k.rateLimitPerMinute;
      const h = k.rateLimitPerHour === null ? 'default' : k.rateLimitPerHour;
      return `${m}/min, ${h}/h`;
    }

    function row(k) {
      const tr = el('tr', { 'data-id': k.id });
      tr.key = k;
      const name = k.label || k.prefix;
      const actions = el('td', { className: 'actions' });
      if (k.revokedAt) {
        tr.classList.add('revoked');
        actions.append(el('span', { className: 'state', title: k.revokedAt }, `revoked ${when(k.revokedAt)}`));
      } else {
        if (isAdmin()) actions.append(button('Limits', `Edit the limits of ${name}`, () => editLimits(tr)));
        actions.append(button('Revoke', `Revoke ${name}`, () => confirmRevoke(tr)));
      }
      tr.append(cell(k.label || '(no label)'), el('td', {}, el('code', {}, k.prefix)), cell(k.scopes.map((s) => s.toLowerCase()).join(', ')),
        cell(when(k.createdAt), k.createdAt), cell(when(k.lastUsedAt) || 'never', k.lastUsedAt),
        cell(when(k.expiresAt) || 'never', k.expiresAt), cell(limits(k)), actions);
      return tr;
    }

    // confirmRevoke asks in the row itself before revokeAPIKey.
    function confirmRevoke(tr) {
      const k = tr.key;
      const name = k.label || k.prefix;
      const actions = tr.cells[7];
      const yes = button('Yes, revoke', `Yes, revoke ${name}`, async (b) => {
        let fresh = null;
        await act(b, async () => { fresh = (await ask(q.revoke, { id: k.id })).revokeAPIKey; });
        if (!fresh) return;
        tr.replaceWith(row(fresh));
        notice(note, `Revoked ${name}: its tokens stop working within seconds.`);
        $('key-create').querySelector('button[type=submit]').focus();
      });
      actions.replaceChildren(el('span', { className: 'confirm' }, `Revoke ${name}? Whatever uses it stops working.`), yes,
        button('Keep', `Keep ${name}`, () => { const fresh = row(k); tr.replaceWith(fresh); fresh.querySelector('button').focus(); }));
      yes.focus();
    }

    // editLimits turns the limits cell into two fields: a whole number, or
    // empty for the server's default.
    function editLimits(tr) {
      const k = tr.key;
      const name = k.label || k.prefix;
      const minute = el('input', { type: 'number', min: 1, max: 1000000, step: 1, value: k.rateLimitPerMinute ?? '', placeholder: 'default', 'aria-label': `Requests per minute for ${name}` });
      const hour = el('input', { type: 'number', min: 1, max: 1000000, step: 1, value: k.rateLimitPerHour ?? '', placeholder: 'default', 'aria-label': `Requests per hour for ${name}` });
      const f = el('form', { className: 'limits' }, minute, ' /min ', hour, ' /h');
      const save = button('Save', `Save the limits of ${name}`, async (b) => {
        const num = (i) => (i.value.trim() === '' ? null : Number(i.value));
        let fresh = null;
        await act(b, async () => {
          fresh = (await ask(q.update, { id: k.id, input: { rateLimitPerMinute: num(minute), rateLimitPerHour: num(hour) } })).updateAPIKey;
        }, { rateLimitPerMinute: minute, rateLimitPerHour: hour });
        if (!fresh) return;
        const next = row(fresh);
        tr.replaceWith(next);
        notice(note, `Saved the limits of ${name}: ${limits(fresh)}.`);
        next.querySelector('button').focus();
      });
      f.addEventListener('submit', (ev) => { ev.preventDefault(); save.click(); });
      tr.cells[6].replaceChildren(f);
      tr.cells[7].replaceChildren(save, button('Cancel', `Cancel editing the limits of ${name}`, () => tr.replaceWith(row(k))));
      minute.focus();
    }

    const createForm = $('key-create');
    const inputs = { label: $('new-key-label'), read: $('new-key-read'), write: $('new-key-write'), expiresAt: $('new-key-expires') };
    createForm.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const submit = createForm.querySelector('button[type=submit]');
      let made = null;
      await act(submit, async () => {
        const input = { scopes: [inputs.read, inputs.write].filter((c) => c.checked).map((c) => c.value) };
        if (inputs.label.value.trim()) input.label = inputs.label.value.trim();
        if (inputs.expiresAt.value) input.expiresAt = new Date(inputs.expiresAt.value).toISOString();
        if (userID) input.userID = userID;
        made = (await ask(q.create, { input })).createAPIKey;
      }, { label: inputs.label, scopes: inputs.write, expiresAt: inputs.expiresAt });
      if (!made) return;
      rows.prepend(row(made));
      rows.firstChild.classList.add('fresh');
      notice(note, `Created ${made.label || made.prefix}.`);
      inputs.label.value = '';
      inputs.expiresAt.value = '';
      secret.show(made.key);
    });

    owner.addEventListener('change', () => {
      userID = owner.value || null;
      secret.hide();
      act(owner, () => pages.reload(true));
    });

    // pickOwners fills the owner picker for admins (themselves first).
    async function pickOwners() {
      const me = pg.viewer();
      if (!me || me.role !== 'ADMIN') {
        $('keys-owner-filter').hidden = true;
        return;
      }
      const list = await people();
      owner.replaceChildren(option('', `${me.email} (you)`), ...list.filter((u) => u.id !== me.id).map((u) => option(u.id, u.email)));
      owner.value = userID || '';
      if (userID && owner.value !== userID) { // beyond the first 100: name it by id
        owner.append(option(userID, userID));
        owner.value = userID;
      }
      $('keys-owner-filter').hidden = false;
    }

    async function open() {
      try {
        await pickOwners();
        await pages.reload(true);
      } catch (e) {
        notice(note, e.message, true);
      }
    }
    return {
      open,
      // of shows the keys of a user (the Users page's Keys buttons).
      of(id) {
        userID = pg.viewer() && pg.viewer().id === id ? null : id;
        secret.hide();
        pg.show('keys');
      },
      reset() {
        userID = null;
        rows.replaceChildren();
        owner.replaceChildren();
        pages.reset();
        secret.hide();
        notice(note, '');
      },
    };
  })();

  // ---- Webhooks and their deliveries ----
  const webhooks = (function webhooksPage() {
    const rows = $('webhooks-rows');
    const note = $('webhooks-message');
    const fields = 'id url description active userID consecutiveFailures backoffUntil createdAt';
    const deliveryFields = 'id event state attempts lastStatusCode lastError nextAttemptAt createdAt';
    const deliveriesPage = 10;
    const q = {
      list: `query AdminWebhooks($after: Cursor) {
  webhooks(first: ${pageSize}, after: $after) {
    pageInfo { hasNextPage endCursor }
    edges { node { ${fields} } }
  }
}`,
      create: `mutation AdminCreateWebhook($input: CreateWebhookInput!) { createWebhook(input: $input) { ${fields} secret } }`,
      update: `mutation AdminUpdateWebhook($id: ID!, $input: UpdateWebhookInput!) { updateWebhook(id: $id, input: $input) { ${fields} } }`,
      remove: 'mutation AdminDeleteWebhook($id: ID!) { deleteWebhook(id: $id) }',
      deliveries: `query AdminDeliveries($id: ID!, $after: Cursor) {
  webhook(id: $id) {
    deliveries(first: ${deliveriesPage}, after: $after) {
      pageInfo { hasNextPage endCursor }
      edges { node { ${deliveryFields} } }
    }
  }
}`,
      retry: `mutation AdminRetryDelivery($webhookID: ID!, $id: ID!) { retryDelivery(webhookID: $webhookID, id: $id) { ${deliveryFields} } }`,
      recover: 'mutation AdminRecoverDeliveries($webhookID: ID!, $since: Time!) { recoverDeliveries(webhookID: $webhookID, since: $since) { requeued } }',
    };
    const secret = secretBox('webhook');

    const pages = pager(document.querySelector('#webhooks .pager'), async (after) => {
      const d = await ask(q.list, { after });
      rows.replaceChildren(...d.webhooks.edges.map((e) => row(e.node)));
      notice(note, d.webhooks.edges.length ? '' : 'No webhooks.');
      return d.webhooks.pageInfo;
    });

    function state(w) {
      if (!w.active) return 'paused';
      return w.backoffUntil ? `active, backing off until ${when(w.backoffUntil)}` : 'active';
    }

    function row(w) {
      const tr = el('tr', { 'data-id': w.id });
      tr.hook = w;
      const mine = pg.viewer() && pg.viewer().id === w.userID;
      const url = cell(w.url);
      if (!mine) url.append(el('div', { className: 'owner' }, `owner ${w.userID}`));
      tr.append(url, cell(w.description || ''), cell(state(w)), cell(w.consecutiveFailures), cell(when(w.createdAt), w.createdAt),
        el('td', { className: 'actions' },
          button('Deliveries', `Deliveries of ${w.url}`, () => toggleDeliveries(tr)),
          button(w.active ? 'Pause' : 'Resume', `${w.active ? 'Pause' : 'Resume'} ${w.url}`, (b) => setActive(tr, !w.active, b)),
          button('Delete', `Delete ${w.url}`, () => confirmDelete(tr))));
      return tr;
    }

    // redraw replaces a webhook's row, keeping its deliveries open below.
    function redraw(tr, w) {
      const next = row(w);
      tr.replaceWith(next);
      if (tr.details) {
        next.details = tr.details;
        next.details.owner = next;
      }
      return next;
    }

    async function setActive(tr, active, control) {
      let fresh = null;
      await act(control, async () => { fresh = (await ask(q.update, { id: tr.hook.id, input: { active } })).updateWebhook; });
      if (!fresh) return;
      const next = redraw(tr, fresh);
      notice(note, `${active ? 'Resumed' : 'Paused'} ${fresh.url}.`);
      next.querySelector(`button[aria-label^="${active ? 'Pause' : 'Resume'}"]`).focus();
    }

    function confirmDelete(tr) {
      const w = tr.hook;
      const yes = button('Yes, delete', `Yes, delete ${w.url}`, async (b) => {
        let ok = false;
        await act(b, async () => { await ask(q.remove, { id: w.id }); ok = true; });
        if (!ok) return;
        if (tr.details) tr.details.remove();
        tr.remove();
        notice(note, `Deleted ${w.url} with its deliveries.`);
        $('new-webhook-url').focus();
      });
      tr.cells[5].replaceChildren(el('span', { className: 'confirm' }, 'Delete it and its deliveries?'), yes,
        button('Keep', `Keep ${w.url}`, () => { const next = redraw(tr, w); next.querySelector('button').focus(); }));
      yes.focus();
    }

    // toggleDeliveries opens (or closes) a webhook's delivery log in a row
    // below it: its newest deliveries, read when opened and when Refresh
    // or a pager button is pressed.
    function toggleDeliveries(tr) {
      if (tr.details) {
        tr.details.remove();
        tr.details = null;
        return;
      }
      const w = tr.hook;
      const body = el('tbody');
      const table = el('table', { className: 'items deliveries' },
        el('caption', {}, `Deliveries to ${w.url}, newest first`),
        el('thead', {}, el('tr', {}, ...['Event', 'State', 'Status code', 'Attempts', 'Created', 'Last error', ''].map((h) =>
          el('th', { scope: 'col' }, h || el('span', { className: 'sr-only' }, 'Actions'))))),
        body);
      const msg = el('p', { className: 'message', role: 'status', hidden: true });
      const nav = el('nav', { className: 'pager', 'aria-label': `Pages of deliveries to ${w.url}` });
      const since = el('input', { type: 'datetime-local', id: `recover-since-${w.id}` });
      since.value = localInput(new Date(Date.now() - 24 * 3600 * 1000));
      const recoverButton = button('Recover failed', `Recover failed deliveries to ${w.url}`, async (b) => {
        let n = null;
        await act(b, async () => {
          n = (await ask(q.recover, { webhookID: w.id, since: new Date(since.value).toISOString() })).recoverDeliveries.requeued;
        }, { since });
        if (n !== null) notice(msg, `${n} failed ${n === 1 ? 'delivery is' : 'deliveries are'} pending again. Refresh to follow them.`);
      });
      const refresh = button('Refresh', `Refresh the deliveries to ${w.url}`, (b) => act(b, () => pages.reload()));
      const tools = el('div', { className: 'tools' }, refresh, el('span', { className: 'recover' }, el('label', { htmlFor: since.id }, 'Failed since'), since, recoverButton));
      const pages = pager(nav, async (after) => {
        const d = await ask(q.deliveries, { id: w.id, after });
        const list = d.webhook.deliveries;
        body.replaceChildren(...list.edges.map((e) => deliveryRow(w, e.node)));
        notice(msg, list.edges.length ? '' : 'No deliveries yet: they come with the events of items this webhook sees.');
        return list.pageInfo;
      });
      const details = el('tr', { className: 'details' }, el('td', { colSpan: 6 }, tools, msg, table, nav));
      details.owner = tr;
      tr.details = details;
      tr.after(details);
      act(refresh, () => pages.reload(true));
    }

    function deliveryRow(w, d) {
      const tr = el('tr', { 'data-id': d.id });
      tr.append(cell(d.event.toLowerCase()), cell(d.state.toLowerCase() + (d.nextAttemptAt ? `, next ${when(d.nextAttemptAt)}` : '')),
        cell(d.lastStatusCode), cell(d.attempts), cell(when(d.createdAt), d.createdAt), cell(d.lastError || ''),
        el('td', { className: 'actions' }, button('Retry', `Retry delivery ${d.id}`, async (b) => {
          let fresh = null;
          await act(b, async () => { fresh = (await ask(q.retry, { webhookID: w.id, id: d.id })).retryDelivery; });
          if (!fresh) return;
          const next = deliveryRow(w, fresh);
          tr.replaceWith(next);
          next.querySelector('button').focus();
        })));
      return tr;
    }

    // localInput formats a time for a datetime-local input, in local time.
    function localInput(d) {
      const p = (n) => String(n).padStart(2, '0');
      return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
    }

    const createForm = $('webhook-create');
    const inputs = { url: $('new-webhook-url'), description: $('new-webhook-description') };
    createForm.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const submit = createForm.querySelector('button[type=submit]');
      let made = null;
      await act(submit, async () => {
        made = (await ask(q.create, { input: { url: inputs.url.value.trim(), description: inputs.description.value } })).createWebhook;
      }, inputs);
      if (!made) return;
      rows.prepend(row(made));
      rows.firstChild.classList.add('fresh');
      notice(note, `Created the webhook for ${made.url}.`);
      inputs.url.value = '';
      inputs.description.value = '';
      secret.show(made.secret);
    });

    return {
      async open() {
        try {
          await pages.reload(true);
        } catch (e) {
          notice(note, e.message, true);
        }
      },
      reset() {
        rows.replaceChildren();
        pages.reset();
        secret.hide();
        notice(note, '');
      },
    };
  })();

  // ---- The audit trail (admins) ----
  const audit = (function auditPage() {
    const rows = $('audit-rows');
    const note = $('audit-message');
    const actor = $('audit-actor');
    const action = $('audit-action');
    const q = {
      list: `query AdminAudit($actorID: ID, $action: AuditAction, $after: Cursor) {
  auditEvents(actorID: $actorID, action: $action, after: $after, first: ${pageSize}) {
    pageInfo { hasNextPage endCursor }
    edges { node { id actorID action targetID changes { field before after } requestID createdAt } }
  }
}`,
    };
    let emails = new Map(); // user id → email, for the actor column

    const pages = pager(document.querySelector('#audit .pager'), async (after) => {
      const d = await ask(q.list, { actorID: actor.value || null, action: action.value || null, after });
      rows.replaceChildren(...d.auditEvents.edges.map((e) => row(e.node)));
      notice(note, d.auditEvents.edges.length ? '' : 'No audit records match.');
      return d.auditEvents.pageInfo;
    });

    function row(a) {
      const changes = el('td', { className: 'changes' });
      for (const c of a.changes) {
        changes.append(el('div', {}, el('code', {}, c.field), `: ${c.before ?? '—'} → ${c.after ?? '—'}`));
      }
      const who = a.actorID ? (emails.get(a.actorID) || a.actorID) : 'system';
      const tr = el('tr', { 'data-id': a.id },
        cell(when(a.createdAt), a.createdAt), cell(who, a.actorID || 'the system: the CLI or the first start'),
        cell(a.action.toLowerCase().replace(/_/g, ' ')), el('td', {}, el('code', {}, a.targetID)), changes);
      if (a.requestID) tr.title = `request ${a.requestID}`;
      return tr;
    }

    for (const s of [actor, action]) s.addEventListener('change', () => act(s, () => pages.reload(true)));

    return {
      async open() {
        try {
          if (action.options.length <= 1) {
            const s = await S.load();
            const names = s.enumValues(s.argType(s.root('query', 'auditEvents'), 'action'));
            action.replaceChildren(option('', 'any'), ...names.map((n) => option(n, n.toLowerCase().replace(/_/g, ' '))));
          }
          const list = await people();
          emails = new Map(list.map((u) => [u.id, u.email]));
          const chosen = actor.value;
          actor.replaceChildren(option('', 'anyone'), ...list.map((u) => option(u.id, u.email)));
          actor.value = chosen;
          await pages.reload(true);
        } catch (e) {
          notice(note, e.message, true);
        }
      },
      reset() {
        rows.replaceChildren();
        actor.replaceChildren(option('', 'anyone'));
        action.replaceChildren(option('', 'any'));
        pages.reset();
        notice(note, '');
      },
    };
  })();

  // ---- Backups of the SQLite database (admins) ----
  // Made with createBackup, listed with backups; a file is downloaded from
  // its downloadPath over HTTP with the session's token (a link cannot
  // send it), then handed to the browser as a file to save.
  const backups = (function backupsPage() {
    const rows = $('backups-rows');
    const note = $('backups-message');
    const make = $('backup-create');
    const fields = 'name size createdAt downloadPath';
    const q = {
      list: `query AdminBackups { backups { ${fields} } }`,
      create: `mutation AdminCreateBackup { createBackup { ${fields} } }`,
    };

    function size(n) {
      const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
      let i = 0;
      while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
      return i === 0 ? `${n} bytes` : `${n.toFixed(1)} ${units[i]}`;
    }

    function row(b) {
      const get = button('Download', `Download ${b.name}`, (ctl) => act(ctl, async () => {
        const { blob, name } = await pg.download(b.downloadPath);
        const url = URL.createObjectURL(blob);
        const a = el('a', { href: url, download: name, hidden: true });
        document.body.append(a);
        a.click();
        a.remove();
        setTimeout(() => URL.revokeObjectURL(url), 60000); // once the browser has taken it
        notice(note, `Downloaded ${name} (${size(blob.size)}). Put it back with server restore, the server stopped.`);
      }));
      return el('tr', { 'data-name': b.name },
        el('td', {}, el('code', {}, b.name)), cell(size(b.size), `${b.size} bytes`), cell(when(b.createdAt), b.createdAt),
        el('td', { className: 'actions' }, get));
    }

    async function read() {
      const d = await ask(q.list);
      rows.replaceChildren(...d.backups.map(row));
      notice(note, d.backups.length ? '' : 'No backups yet.');
    }

    make.addEventListener('click', async () => {
      let made = null;
      await act(make, async () => { made = (await ask(q.create)).createBackup; });
      if (!made) return;
      try {
        await read(); // BACKUP_KEEP may have removed the oldest
      } catch (e) {
        rows.prepend(row(made));
      }
      const tr = rows.querySelector(`tr[data-name="${CSS.escape(made.name)}"]`);
      if (tr) tr.classList.add('fresh');
      notice(note, `Made ${made.name} (${size(made.size)}).`);
    });

    return {
      async open() {
        try {
          await read();
        } catch (e) {
          notice(note, e.message, true);
        }
      },
      reset() {
        rows.replaceChildren();
        notice(note, '');
      },
    };
  })();

  // ---- The server's health (admins) ----
  // Read from the server's own /metrics (same origin, no token: what a
  // Prometheus scraper reads) and /readyz every few seconds while the page
  // is shown; the charts keep the last few minutes, computed in the page
  // from the counters' increase between two reads.
  const health = (function healthPage() {
    const note = $('health-message');
    const every = 5000;
    const keep = 60; // points: five minutes
    let timer = null;
    let last = null; // the previous read's counters
    let series = null;

    // parse reads Prometheus' text format into [{name, labels, value}].
    function parse(text) {
      const out = [];
      for (const line of text.split('\n')) {
        if (!line || line[0] === '#') continue;
        const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
        if (!m) continue;
        const labels = {};
        for (const l of (m[2] || '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
        out.push({ name: m[1], labels, value: Number(m[3]) });
      }
      return out;
    }

    const sum = (ms, name, pred) => ms.filter((m) => m.name === name && (!pred || pred(m.labels))).reduce((a, m) => a + m.value, 0);

    // counters are what the charts are computed from, at one read.
    function counters(ms) {
      const buckets = new Map(); // le → count, every route together
      for (const m of ms) {
        if (m.name === 'http_request_duration_seconds_bucket') buckets.set(m.labels.le, (buckets.get(m.labels.le) || 0) + m.value);
      }
      return {
        at: Date.now(),
        requests: sum(ms, 'http_requests_total'),
        errors: sum(ms, 'http_requests_total', (l) => /^5/.test(l.status || '')),
        buckets,
      };
    }

    // p99 is the 99th percentile of the requests between two reads, from
    // the histogram's buckets (the bucket's upper bound, as Prometheus'
    // histogram_quantile would interpolate within it: an upper estimate).
    function p99(prev, cur) {
      const les = [...cur.buckets.keys()].sort((a, b) => (a === '+Inf' ? 1 : b === '+Inf' ? -1 : Number(a) - Number(b)));
      const d = les.map((le) => [le, cur.buckets.get(le) - (prev.buckets.get(le) || 0)]);
      const total = d.length ? d[d.length - 1][1] : 0;
      if (total <= 0) return 0;
      const found = d.find(([, n]) => n >= 0.99 * total);
      return found[0] === '+Inf' ? Number(les[les.length - 2]) : Number(found[0]);
    }

    function duration(s) {
      const d = Math.floor(s / 86400); const h = Math.floor((s % 86400) / 3600); const m = Math.floor((s % 3600) / 60);
      return d ? `${d}d ${h}h` : h ? `${h}h ${m}m` : `${m}m ${Math.floor(s % 60)}s`;
    }

    // chart draws values as an inline SVG line with its latest value.
    function chart(id, values, format) {
      const box = $(id);
      const w = 300; const h = 60;
      const max = Math.max(...values, 1e-9);
      const pts = values.map((v, i) => `${(i * w) / Math.max(keep - 1, 1)},${h - (v / max) * (h - 4) - 2}`).join(' ');
      const ns = 'http://www.w3.org/2000/svg';
      const svg = document.createElementNS(ns, 'svg');
      svg.setAttribute('viewBox', `0 0 ${w} ${h}`);
      svg.setAttribute('role', 'img');
      const latest = values.length ? values[values.length - 1] : 0;
      svg.setAttribute('aria-label', `${box.dataset.title}: ${format(latest)} now, at most ${format(values.length ? max : 0)} in the last ${values.length} reads`);
      const line = document.createElementNS(ns, 'polyline');
      line.setAttribute('points', pts);
      line.setAttribute('class', 'line');
      svg.append(line);
      box.querySelector('.value').textContent = values.length ? format(latest) : '…';
      box.querySelector('svg') ? box.querySelector('svg').replaceWith(svg) : box.append(svg);
    }

    async function tick() {
      if ($('health').hidden) { stop(); return; }
      try {
        const [mres, rres] = await Promise.all([
          fetch('/metrics', { credentials: 'omit' }),
          fetch('/readyz', { credentials: 'omit' }),
        ]);
        if (!mres.ok) throw new Error(`/metrics answered HTTP ${mres.status}`);
        const ms = parse(await mres.text());
        const ready = await rres.json().catch(() => null);
        const goInfo = ms.find((m) => m.name === 'go_info');
        const start = ms.find((m) => m.name === 'process_start_time_seconds');
        const pool = ms.find((m) => m.name === 'go_sql_max_open_connections');
        const dialect = pool ? pool.labels.db_name : '';
        $('health-version').textContent = goInfo ? `built with ${goInfo.labels.version}` : '—';
        $('health-uptime').textContent = start ? `${duration(Date.now() / 1000 - start.value)} (since ${new Date(start.value * 1000).toLocaleString()})` : '—';
        $('health-database').textContent = `${dialect === 'postgres' ? 'PostgreSQL' : dialect ? 'SQLite' : '—'}, ` +
          (rres.ok ? 'ready' : `not ready: ${ready && ready.error ? ready.error.message : `HTTP ${rres.status}`}`) +
          (pool ? `; ${sum(ms, 'go_sql_in_use_connections')} of ${sum(ms, 'go_sql_open_connections')} open connections in use` : '');
        const cur = counters(ms);
        if (last) {
          const secs = Math.max((cur.at - last.at) / 1000, 0.001);
          const push = (k, v) => { series[k].push(Math.max(v, 0)); if (series[k].length > keep) series[k].shift(); };
          push('rate', (cur.requests - last.requests) / secs);
          push('errors', (cur.errors - last.errors) / secs);
          push('p99', p99(last, cur) * 1000);
        }
        const backlog = sum(ms, 'itemsvc_webhook_queue_depth') + sum(ms, 'itemsvc_webhook_undispatched_events');
        series.backlog.push(backlog);
        if (series.backlog.length > keep) series.backlog.shift();
        last = cur;
        chart('health-rate', series.rate, (v) => `${v.toFixed(1)}/s`);
        chart('health-errors', series.errors, (v) => `${v.toFixed(2)}/s`);
        chart('health-p99', series.p99, (v) => `${v < 1 ? v.toFixed(2) : Math.round(v)} ms`);
        chart('health-backlog', series.backlog, (v) => `${v}`);
        notice(note, `Read ${new Date().toLocaleTimeString()}; every ${every / 1000} s while this page is shown.`);
      } catch (e) {
        notice(note, `The server's metrics could not be read: ${e.message}`, true);
      }
      timer = setTimeout(tick, every);
    }

    function stop() {
      clearTimeout(timer);
      timer = null;
    }

    return {
      open() {
        stop();
        last = null;
        series = { rate: [], errors: [], p99: [], backlog: [] };
        tick();
      },
      reset() {
        stop();
        notice(note, '');
      },
    };
  })();

  // ---- Items, read from the schema ----
  // The columns, sort options, filters, detail view and forms all come from
  // the schema (schema.js: one introspection query per page load): the
  // columns are Item's stored fields (those ItemWhereInput filters on; ids
  // shown in the detail view only) and its one-object edges (the owner, by
  // its email); a column sorts when ItemOrderField has its name; a filter
  // row offers each field's predicates of ItemWhereInput; New item is
  // CreateItemInput's fields and Edit UpdateItemInput's, each input as its
  // type says. A field added to the ent schema shows here unchanged.
  let itemModel = null;

  // model reads what the items pages need from the schema, once.
  async function model() {
    if (itemModel) return itemModel;
    const s = await S.load();
    const list = s.root('query', 'items');
    const itemType = S.named(s.root('query', 'item').type).name;
    const whereName = s.argType(list, 'where');
    const orderName = s.argType(list, 'orderBy');
    const orderEnum = S.named(s.field(orderName, 'field').type).name;
    const createName = s.argType(s.root('mutation', 'createItem'), 'input');
    const updateName = s.argType(s.root('mutation', 'updateItem'), 'input');
    const filterable = s.filterable(whereName);
    const stored = new Set(filterable.map((f) => f.field));
    const leaves = s.leaves(itemType);
    const objects = s.objects(itemType);
    const isTime = (f) => S.named(f.type).name === 'Time';
    const shown = leaves.filter((f) => stored.has(f.name) && S.named(f.type).name !== 'ID');
    // Words first, then the edges, then the times: name, status, owner, updated.
    const columns = [
      ...shown.filter((f) => !isTime(f)).map((f) => ({ field: f, kind: 'leaf' })),
      ...objects.map((f) => ({ field: f, kind: 'object', display: s.display(S.named(f.type).name) })),
      ...shown.filter(isTime).map((f) => ({ field: f, kind: 'leaf' })),
    ];
    const sortable = new Set(s.enumValues(orderEnum));
    for (const c of columns) c.sort = sortable.has(S.enumName(c.field.name)) ? S.enumName(c.field.name) : null;
    const sel = s.selection(itemType);
    // An event's item carries its stored fields (no etag: events carry no version).
    const eventSel = s.selection(itemType, leaves.filter((f) => !stored.has(f.name) && f.name !== 'id').map((f) => f.name));
    const versioned = leaves.some((f) => f.name === 'etag') && s.root('mutation', 'updateItem').args.some((a) => a.name === 'ifMatch');
    const eventsField = s.root('query', 'events');
    const eventType = S.named(s.root('subscription', 'itemEvents').type).name;
    itemModel = {
      s, itemType, whereName, orderName, createName, updateName, filterable, columns, leaves, objects, versioned,
      title: s.display(itemType),
      updatable: new Map(s.inputFields(updateName).map((f) => [f.name, f])),
      defaultOrder: sortable.has('UPDATED_AT') ? { field: 'UPDATED_AT', direction: 'DESC' } : null,
      eventTypes: eventsField ? s.argType(eventsField, 'types') : null,
      eventSel,
      eventLeaves: s.leaves(eventType).map((f) => f.name).join(' '),
      q: {
        list: `query AdminItems($after: Cursor, $where: ${whereName}, $orderBy: ${orderName}) {
  items(first: ${pageSize}, after: $after, where: $where, orderBy: $orderBy) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { node { ${sel} } }
  }
}`,
        one: `query AdminItem($id: ID!) { item(id: $id) { ${sel} } }`,
        create: `mutation AdminCreateItem($input: ${createName}!) { createItem(input: $input) { ${sel} } }`,
        update: `mutation AdminUpdateItem($id: ID!, $input: ${updateName}!${versioned ? ', $ifMatch: String' : ''}) {
  updateItem(id: $id, input: $input${versioned ? ', ifMatch: $ifMatch' : ''}) { ${sel} }
}`,
        remove: `mutation AdminDeleteItem($id: ID!${versioned ? ', $ifMatch: String' : ''}) { deleteItem(id: $id${versioned ? ', ifMatch: $ifMatch' : ''}) }`,
        live: `subscription AdminItemLive { itemEvents { id type item { ${eventSel} } } }`,
        owners: 'query AdminItemOwners { users(first: 100, orderBy: {field: EMAIL, direction: ASC}) { edges { node { id email } } } }',
      },
    };
    return itemModel;
  }

  // columnText is what a column of an item shows in its cell.
  function columnText(c, item) {
    if (c.kind === 'object') return item[c.field.name] ? String(item[c.field.name][c.display]) : '—';
    return S.show(c.field.type, item[c.field.name]);
  }

  // liveToggle ties a checkbox to a subscription of item events: ticked,
  // it subscribes (query with vars(), read at each start) and hands each
  // event to onEvent; unticked, or when the stream ends or fails, it stops
  // and says so (say(text, isError), in words: started, ended, stopped).
  // ready() tells whether the page can follow now (it says why not).
  function liveToggle(box, { query, vars, onEvent, say, ready, words }) {
    let live = null; // the AbortController of the running stream
    async function follow(ctrl) {
      say(words.started);
      try {
        for await (const msg of pg.subscribe(query(), vars(), ctrl.signal)) {
          const err = msg.errors && msg.errors[0];
          if (err) throw new Error(pg.describe(err));
          onEvent(msg.data.itemEvents);
        }
        if (!ctrl.signal.aborted) say(words.ended, true);
      } catch (e) {
        if (!ctrl.signal.aborted) say(`${words.stopped}: ${e.message}`, true);
      }
      if (live === ctrl) {
        live = null;
        box.checked = false;
      }
    }
    const toggle = {
      running: () => live !== null,
      start() {
        box.checked = true;
        live = new AbortController();
        follow(live);
      },
      stop() {
        if (live) live.abort();
        live = null;
        box.checked = false;
      },
    };
    box.addEventListener('change', () => {
      if (!box.checked) {
        toggle.stop();
        say('');
      } else if (!ready()) {
        box.checked = false;
      } else {
        toggle.start();
      }
    });
    return toggle;
  }

  const items = (function itemsPage() {
    const view = $('browse');
    const listBox = $('browse-list');
    const detailBox = $('item-detail');
    const rows = $('item-rows');
    const head = $('item-head');
    const note = $('browse-message');
    const liveBox = $('live');
    const ownerSel = $('filter-owner');
    const filterRows = $('filter-rows');
    const createForm = $('item-create');
    const createFields = $('item-create-fields');
    let m = null;
    let order = null; // {field, direction} of ItemOrder
    let back = []; // {after, offset} of each page before this one
    let after = null; // this page's cursor
    let offset = 0; // the number of items before this page
    let endCursor = null;
    let total = 0;
    let hasNext = false;
    let loading = 0; // the number of the last load, to drop answers to older ones
    let built = false; // the header, create form and filter fields are drawn
    let ownersRead = false;
    let creating = null; // the create form's {inputs, read}

    const tell = (text, isError) => notice(note, text, isError);
    const titleOf = (item) => String(item[m.title] ?? item.id);

    // build draws what comes from the schema: the header with its sort
    // buttons and the create form; once per page load.
    function build() {
      if (built) return;
      built = true;
      order = m.defaultOrder;
      drawHead();
      createFields.replaceChildren();
      creating = S.form(m.s, m.createName, createFields, { idPrefix: 'new-item' });
    }

    function drawHead() {
      head.replaceChildren(...m.columns.map((c) => {
        const th = el('th', { scope: 'col', 'data-field': c.field.name });
        const text = S.label(c.field.name);
        if (!c.sort) {
          th.textContent = text;
          return th;
        }
        const on = order && order.field === c.sort;
        th.setAttribute('aria-sort', on ? (order.direction === 'ASC' ? 'ascending' : 'descending') : 'none');
        const b = button(text, `Sort by ${text}`, (ctl) => sortBy(c.sort, ctl));
        b.className = 'sort';
        b.append(el('span', { 'aria-hidden': 'true', className: 'arrow' }, on ? (order.direction === 'ASC' ? ' ▲' : ' ▼') : ''));
        th.append(b);
        return th;
      }), el('th', { scope: 'col' }, el('span', { className: 'sr-only' }, 'Actions')));
    }

    // sortBy orders by a column: ascending first, then each click turns it.
    async function sortBy(field, control) {
      const was = order;
      order = { field, direction: order && order.field === field && order.direction === 'ASC' ? 'DESC' : 'ASC' };
      back = [];
      after = null;
      offset = 0;
      const ok = await act(control, () => load(true));
      if (!ok) {
        order = was; // the header stays as it was, the failure beside the button
        return;
      }
      drawHead();
      const again = head.querySelector(`th[data-field] button[aria-label="${control.getAttribute('aria-label')}"]`);
      if (again) again.focus();
    }

    // ---- filters: rows of field, predicate and value, from the where input
    function addFilter(fieldName) {
      const fieldSel = el('select', { 'aria-label': 'Filter field' },
        ...m.filterable.map((f) => option(f.field, S.label(f.field))));
      const opSel = el('select', { 'aria-label': 'Filter condition' });
      const valueBox = el('span', { className: 'value' });
      const remove = button('Remove', 'Remove this filter', () => { rowEl.remove(); refilter(); });
      const rowEl = el('span', { className: 'filter filter-row' }, fieldSel, opSel, valueBox, remove);
      rowEl.read = () => {
        const p = rowEl.predicate;
        if (!p) return null;
        if (p.suffix === 'IsNil' || p.suffix === 'NotNil') return [p.name, true];
        const v = S.read(rowEl.input);
        return v === undefined ? null : [p.name, v];
      };
      function predicates() {
        const f = m.filterable.find((x) => x.field === fieldSel.value);
        opSel.replaceChildren(...f.predicates.map((p) => option(p.name, p.label)));
        // Words are looked for, anything else matched.
        const contains = f.predicates.find((p) => p.suffix === 'ContainsFold');
        if (contains && S.named(contains.type).name === 'String') opSel.value = contains.name;
        value();
      }
      function value() {
        const f = m.filterable.find((x) => x.field === fieldSel.value);
        rowEl.predicate = f.predicates.find((p) => p.name === opSel.value);
        const p = rowEl.predicate;
        if (p.suffix === 'IsNil' || p.suffix === 'NotNil') {
          rowEl.input = null;
          valueBox.replaceChildren();
          return;
        }
        // The value's type, but never required: an empty value is no filter.
        const ref = p.type.kind === 'NON_NULL' ? p.type.ofType : p.type;
        rowEl.input = S.control(m.s, ref, undefined, { 'aria-label': `${S.label(f.field)} ${p.label}` });
        if (rowEl.input.tagName === 'SELECT') rowEl.input.addEventListener('change', refilter);
        valueBox.replaceChildren(rowEl.input);
      }
      fieldSel.addEventListener('change', predicates);
      opSel.addEventListener('change', value);
      if (fieldName) fieldSel.value = fieldName;
      predicates();
      filterRows.append(rowEl);
      return rowEl;
    }

    function where() {
      const w = {};
      if (ownerSel.value) w.hasOwnerWith = [{ id: ownerSel.value }];
      const and = [];
      for (const r of filterRows.children) {
        const kv = r.read();
        if (kv) and.push({ [kv[0]]: kv[1] });
      }
      if (and.length === 1) Object.assign(w, and[0]);
      else if (and.length > 1) w.and = and;
      return w;
    }

    // matches tells whether an item, as an event carries it, passes the
    // filters (the folding of …Fold approximated by lower case).
    function matches(item) {
      if (ownerSel.value && (!item.owner || item.owner.id !== ownerSel.value)) return false;
      for (const r of filterRows.children) {
        const kv = r.read();
        if (!kv) continue;
        const p = r.predicate;
        const field = kv[0].slice(0, kv[0].length - p.suffix.length);
        if (!(field in item)) continue; // not carried by the event: the next load decides
        if (!test(p.suffix, item[field], kv[1])) return false;
      }
      return true;
    }

    function test(suffix, have, want) {
      const lc = (x) => String(x ?? '').toLowerCase();
      const cmp = (a, b) => (typeof a === 'string' && /^\d{4}-/.test(a) ? Date.parse(a) - Date.parse(b) : a < b ? -1 : a > b ? 1 : 0);
      switch (suffix) {
        case '': return cmp(have, want) === 0;
        case 'NEQ': return cmp(have, want) !== 0;
        case 'In': return want.some((w) => cmp(have, w) === 0);
        case 'NotIn': return !want.some((w) => cmp(have, w) === 0);
        case 'GT': return cmp(have, want) > 0;
        case 'GTE': return cmp(have, want) >= 0;
        case 'LT': return cmp(have, want) < 0;
        case 'LTE': return cmp(have, want) <= 0;
        case 'Contains': return String(have).includes(want);
        case 'ContainsFold': return lc(have).includes(lc(want));
        case 'HasPrefix': return String(have).startsWith(want);
        case 'HasSuffix': return String(have).endsWith(want);
        case 'EqualFold': return lc(have) === lc(want);
        case 'IsNil': return have === null || have === undefined;
        case 'NotNil': return have !== null && have !== undefined;
        default: return true;
      }
    }

    // ---- the list
    // load reads the page at after; paged, when Next or Previous (its
    // button) asked for it, puts the page before back if the read fails
    // (the rows on screen stay those of that page) and says why beside the
    // button. sorted: a sort button asked, which shows the failure itself.
    async function load(paged) {
      const n = ++loading;
      view.setAttribute('aria-busy', 'true');
      try {
        const data = await ask(m.q.list, { after, where: where(), orderBy: order });
        if (n !== loading) return;
        total = data.items.totalCount;
        hasNext = data.items.pageInfo.hasNextPage;
        endCursor = data.items.pageInfo.endCursor;
        rows.replaceChildren(...data.items.edges.map((e) => row(e.node)));
        pager();
        tell(total ? '' : 'No items match.');
        notice($('page-error'), '');
      } catch (e) {
        if (n !== loading) return;
        if (paged === true) throw e;
        tell(e.message, true);
        if (paged) {
          paged.button.after($('page-error')); // where the user clicked
          notice($('page-error'), e.message, true);
          paged.restore();
        }
      } finally {
        if (n === loading) view.removeAttribute('aria-busy');
      }
    }

    function pager() {
      const shown = rows.children.length;
      $('page-info').textContent = shown ? `${offset + 1}–${offset + shown} of ${total}` : `0 of ${total}`;
      $('page-prev').disabled = back.length === 0;
      $('page-next').disabled = !hasNext;
    }

    function row(item) {
      const tr = el('tr', { 'data-id': item.id });
      tr.item = item;
      const name = titleOf(item);
      for (const c of m.columns) {
        // A long text is cut (whole in its tooltip, and in the detail
        // view); a time's tooltip is its RFC 3339 value.
        const text = columnText(c, item);
        const long = text.length > 80;
        const isTime = c.kind === 'leaf' && S.named(c.field.type).name === 'Time';
        const td = cell(long ? `${text.slice(0, 79)}…` : text, long ? text : isTime ? item[c.field.name] : null);
        td.dataset.field = c.field.name;
        tr.append(td);
      }
      tr.append(el('td', { className: 'actions' },
        button('Details', `Details of ${name}`, () => openDetail(item.id)),
        button('Edit', `Edit ${name}`, () => edit(tr)),
        button('Delete', `Delete ${name}`, () => confirmDelete(tr))));
      return tr;
    }

    const actionsOf = (tr) => tr.cells[tr.cells.length - 1];

    // edit turns the row's cells that UpdateItemInput can change into
    // inputs, saved by updateItem. A row drawn from an event is read first,
    // for its etag.
    async function edit(tr) {
      if (m.versioned && !tr.item.etag) {
        try {
          tr = refresh(tr, (await ask(m.q.one, { id: tr.item.id })).item);
        } catch (e) {
          tell(`Reading “${titleOf(tr.item)}” failed: ${e.message}`, true);
          return;
        }
      }
      const item = tr.item;
      const name = titleOf(item);
      const inputs = {};
      for (const td of Array.from(tr.cells)) {
        const f = m.updatable.get(td.dataset.field);
        if (!f) continue;
        const input = S.control(m.s, f.type, item[f.name], { 'aria-label': `${S.label(f.name)} of ${name}` });
        input.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' && input.tagName === 'INPUT') { ev.preventDefault(); save(tr, inputs, saveButton); } });
        inputs[f.name] = input;
        td.replaceChildren(input);
      }
      const saveButton = button('Save', `Save ${name}`, (b) => save(tr, inputs, b));
      actionsOf(tr).replaceChildren(saveButton, button('Cancel', `Cancel editing ${name}`, () => refresh(tr, item)));
      const first = Object.values(inputs)[0];
      if (first) first.focus();
    }

    function changes(inputs, item) {
      const out = {};
      for (const [k, input] of Object.entries(inputs)) {
        const v = S.read(input);
        if (v !== undefined && JSON.stringify(v) !== JSON.stringify(item[k])) out[k] = v;
      }
      return out;
    }

    async function save(tr, inputs, control) {
      const item = tr.item;
      control.disabled = true;
      try {
        const data = await ask(m.q.update, { id: item.id, input: changes(inputs, item), ifMatch: item.etag });
        refresh(tr, data.updateItem);
        tell(`Saved “${titleOf(data.updateItem)}”.`);
      } catch (e) {
        if (e.code === 'PRECONDITION_FAILED') return changedMeanwhile(tr, 'saved');
        tell(`Saving “${titleOf(item)}” failed: ${e.message}`, true);
        inRow(tr, e.message);
      } finally {
        control.disabled = false;
      }
    }

    // inRow shows a failure beside the row's buttons, where the user
    // clicked (the view's message says it too).
    function inRow(tr, text) {
      const td = actionsOf(tr);
      let span = td.querySelector('.inline-error');
      if (!span) {
        span = el('span', { className: 'inline-error', role: 'alert' });
        td.prepend(span);
      }
      notice(span, text, true);
    }

    function refresh(tr, item) {
      const fresh = row(item);
      tr.replaceWith(fresh);
      return fresh;
    }

    // changedMeanwhile answers an ifMatch refused: someone changed (or
    // deleted) the item since the row was read. The row shows it as it is
    // now, and nothing of the user's change was written.
    async function changedMeanwhile(tr, what) {
      const name = titleOf(tr.item);
      try {
        const item = (await ask(m.q.one, { id: tr.item.id })).item;
        refresh(tr, item);
        tell(`“${name}” was changed by someone else meanwhile, so it was not ${what}: the row shows it as it is now.`, true);
      } catch (e) {
        if (e.code !== 'NOT_FOUND') {
          tell(`“${name}” was changed by someone else meanwhile, and reading it again failed: ${e.message}`, true);
          return;
        }
        drop(tr.item.id);
        tell(`“${name}” was deleted by someone else meanwhile.`, true);
      }
    }

    function confirmDelete(tr) {
      const item = tr.item;
      const name = titleOf(item);
      actionsOf(tr).replaceChildren(
        button('Yes, delete', `Yes, delete ${name}`, () => remove(tr)),
        button('Keep', `Keep ${name}`, () => refresh(tr, item)));
      actionsOf(tr).firstChild.focus();
    }

    async function remove(tr) {
      const name = titleOf(tr.item);
      try {
        await ask(m.q.remove, { id: tr.item.id, ifMatch: tr.item.etag });
        pg.spent(tr.item.id);
        drop(tr.item.id);
        tell(`Deleted “${name}”.`);
      } catch (e) {
        if (e.code === 'PRECONDITION_FAILED') return changedMeanwhile(tr, 'deleted');
        tell(`Deleting “${name}” failed: ${e.message}`, true);
        inRow(tr, e.message);
      }
    }

    function rowOf(id) {
      return Array.from(rows.children).find((tr) => tr.dataset.id === id) || null;
    }

    // drop takes an item off the page and the count (once, whether the
    // delete or its event comes first).
    function drop(id) {
      const tr = rowOf(id);
      if (!tr) return;
      tr.remove();
      total--;
      pager();
    }

    // ---- the detail view: every field of one item, and its edit form
    // openDetail reads an item and shows it (from a row's Details, or an
    // event's Open on the Events page, which may come first).
    async function openDetail(id, said) {
      let item;
      try {
        m = await model();
        build();
        item = (await ask(m.q.one, { id })).item;
      } catch (e) {
        tell(`Reading ${id} failed: ${e.message}`, true);
        return;
      }
      drawDetail(item, said);
      pg.show('browse'); // its list is not read while the detail view shows
    }

    function drawDetail(item, said) {
      const name = titleOf(item);
      const facts = el('dl', { className: 'facts' });
      for (const f of m.leaves) {
        facts.append(el('dt', {}, S.label(f.name)), el('dd', { 'data-field': f.name, title: item[f.name] ?? '' }, S.show(f.type, item[f.name])));
      }
      for (const f of m.objects) {
        const o = item[f.name];
        const d = m.s.display(S.named(f.type).name);
        facts.append(el('dt', {}, S.label(f.name)), el('dd', { 'data-field': f.name }, o ? `${o[d]} (${o.id})` : '—'));
      }
      const editForm = el('form', { className: 'create', id: 'item-edit', 'aria-labelledby': 'item-edit-title' },
        el('h4', { id: 'item-edit-title' }, 'Edit'));
      const fields = el('span', { className: 'fields' });
      const built = S.form(m.s, m.updateName, fields, { idPrefix: 'edit-item', values: item, changedFrom: item });
      const submit = el('button', { type: 'submit' }, 'Save changes');
      editForm.append(fields, submit);
      const msg = el('p', { className: 'message', role: 'status', hidden: true });
      editForm.addEventListener('submit', async (ev) => {
        ev.preventDefault();
        let fresh = null;
        let conflict = false;
        await act(submit, async () => {
          try {
            fresh = (await ask(m.q.update, { id: item.id, input: built.read(), ifMatch: item.etag })).updateItem;
          } catch (e) {
            if (e.code !== 'PRECONDITION_FAILED') throw e;
            conflict = true;
          }
        }, built.inputs);
        if (conflict) {
          openDetail(item.id, `“${name}” was changed by someone else meanwhile, so it was not saved: this is it as it is now.`);
          return;
        }
        if (fresh) drawDetail(fresh, `Saved “${titleOf(fresh)}”.`);
      });
      const del = button('Delete', `Delete ${name}`, () => {
        const yes = button('Yes, delete', `Yes, delete ${name}`, async (b) => {
          let ok = false;
          await act(b, async () => { await ask(m.q.remove, { id: item.id, ifMatch: item.etag }); ok = true; });
          if (!ok) return;
          pg.spent(item.id);
          closeDetail();
          drop(item.id);
          tell(`Deleted “${name}”.`);
        });
        tools.replaceChildren(back, el('span', { className: 'confirm' }, `Delete “${name}”?`), yes,
          button('Keep', `Keep ${name}`, () => drawDetail(item)));
        yes.focus();
      });
      const back = button('Back to the list', 'Back to the list', () => {
        closeDetail();
        if (!rows.children.length) load(); // opened from the Events page: never read
      });
      const tools = el('div', { className: 'tools' }, back, del);
      detailBox.replaceChildren(tools, el('h3', { id: 'item-detail-title' }, name), msg, facts, editForm);
      detailBox.dataset.id = item.id;
      detailBox.item = item;
      listBox.hidden = true;
      detailBox.hidden = false;
      if (said) notice(msg, said, /meanwhile/.test(said));
      tell('');
      const rowNow = rowOf(item.id);
      if (rowNow) refresh(rowNow, item);
      $('item-detail-title').focus();
    }

    function closeDetail() {
      detailBox.hidden = true;
      detailBox.replaceChildren();
      listBox.hidden = false;
    }

    // ---- live: item events applied to the page
    // A new or changed item that passes the filters goes on top of the
    // first page, a deleted one or one that no longer passes leaves it;
    // in the default order (last changed first) a changed item moves to
    // the top, in any other it stays where it is. The first page grows
    // rather than push rows off its end: the next page starts after the
    // last row the server sent.
    function apply(ev) {
      const item = ev.item;
      const tr = rowOf(item.id);
      if (ev.type === 'DELETED' || !matches(item)) {
        if (tr) drop(item.id);
        return;
      }
      if (tr && tr.querySelector('input, select')) return; // being edited: leave it to the user
      const inDefault = !order || (m.defaultOrder && order.field === m.defaultOrder.field && order.direction === m.defaultOrder.direction);
      if (tr && !inDefault) {
        const fresh = refresh(tr, Object.assign({}, tr.item, item, { etag: undefined }));
        fresh.classList.add('fresh');
        return;
      }
      if (tr) tr.remove();
      if (ev.type === 'CREATED') total++;
      if (back.length === 0) {
        const fresh = row(item);
        fresh.classList.add('fresh');
        rows.prepend(fresh);
      }
      pager();
    }

    const live = liveToggle(liveBox, {
      query: () => m.q.live,
      vars: () => ({}),
      onEvent: apply,
      say: tell,
      ready() {
        if (pg.viewer() && m) return true;
        tell('Sign in first.', true);
        return false;
      },
      words: {
        started: 'Live: changes show as they happen.',
        ended: 'The live stream ended; tick Live updates to follow again.',
        stopped: 'The live stream stopped',
      },
    });

    function refilter() {
      back = [];
      after = null;
      offset = 0;
      load();
    }
    ownerSel.addEventListener('change', refilter);
    $('filter-add').addEventListener('click', () => {
      if (!m) return;
      const r = addFilter();
      r.querySelector('select').focus();
    });
    $('browse-filters').addEventListener('submit', (ev) => {
      ev.preventDefault();
      refilter();
    });
    $('page-next').addEventListener('click', () => {
      const was = { after, offset };
      back.push(was);
      after = endCursor;
      offset += rows.children.length;
      load({ button: $('page-next'), restore: () => { back.pop(); ({ after, offset } = was); } });
    });
    $('page-prev').addEventListener('click', () => {
      const was = { after, offset };
      const prev = back.pop() || { after: null, offset: 0 };
      ({ after, offset } = prev);
      load({ button: $('page-prev'), restore: () => { back.push(prev); ({ after, offset } = was); } });
    });

    createForm.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const submit = createForm.querySelector('button[type=submit]');
      let made = null;
      await act(submit, async () => {
        made = (await ask(m.q.create, { input: creating.read() })).createItem;
      }, creating.inputs);
      if (!made) return;
      if (rowOf(made.id)) rowOf(made.id).remove(); // its event came first
      const fresh = row(made);
      fresh.classList.add('fresh');
      rows.prepend(fresh);
      total++;
      pager();
      tell(`Created “${titleOf(made)}”.`);
      createFields.replaceChildren();
      creating = S.form(m.s, m.createName, createFields, { idPrefix: 'new-item' });
      Object.values(creating.inputs)[0].focus();
    });

    // loadOwners fills the owner filter from the users list, or hides it
    // for a user who may not list users (they see their own items only).
    async function loadOwners() {
      if (ownersRead) return;
      try {
        const list = (await ask(m.q.owners)).users.edges.map((e) => e.node);
        ownerSel.replaceChildren(option('', 'anyone'), ...list.map((u) => option(u.id, u.email)));
        $('owner-filter').hidden = false;
      } catch (e) {
        if (e.code !== 'PERMISSION_DENIED') throw e;
        $('owner-filter').hidden = true;
      }
      ownersRead = true;
    }

    return {
      async open() {
        if (!pg.viewer()) {
          tell('Sign in to browse the items your API key may see.');
          return;
        }
        try {
          m = await model();
          build();
          await loadOwners();
          if (detailBox.hidden) await load();
        } catch (e) {
          tell(e.message, true);
        }
      },
      openDetail,
      reset() {
        live.stop();
        loading++;
        ownersRead = false;
        back = [];
        after = null;
        offset = 0;
        if (m) order = m.defaultOrder;
        if (built) {
          drawHead();
          createFields.replaceChildren(); // what one sign-in typed is not another's
          creating = S.form(m.s, m.createName, createFields, { idPrefix: 'new-item' });
        }
        rows.replaceChildren();
        filterRows.replaceChildren();
        ownerSel.replaceChildren(option('', 'anyone'));
        $('owner-filter').hidden = true;
        $('page-info').textContent = '';
        notice($('page-error'), '');
        closeDetail();
        tell('');
      },
    };
  })();

  // ---- The event history: the events query, paged, filtered by type and
  // since an event, and its live tail (the itemEvents subscription, from
  // the newest event on screen, so that none is missed between the two).
  const events = (function eventsPage() {
    const rows = $('events-rows');
    const note = $('events-message');
    const typesBox = $('events-types');
    const since = $('events-since');
    const liveBox = $('events-live');
    let m = null;
    let q = null;
    let onFirst = true;

    function chosenTypes() {
      const t = Array.from(typesBox.querySelectorAll('input:checked'), (c) => c.value);
      return t.length ? t : null;
    }

    const pages = pager(document.querySelector('#events .pager'), async (afterCursor) => {
      const d = await ask(q.list, { types: chosenTypes(), since: since.value.trim() || null, after: afterCursor });
      rows.replaceChildren(...d.events.edges.map((e) => row(e.node)));
      onFirst = afterCursor === null || afterCursor === undefined;
      notice(note, d.events.edges.length ? '' : 'No events match.');
      return d.events.pageInfo;
    });

    function row(ev) {
      const item = ev.item;
      const name = titleOfItem(item);
      const open = ev.type === 'DELETED' ? null : button('Open', `Open ${name} (${ev.id})`, () => items.openDetail(item.id));
      const newer = button('Newer', `Events after ${ev.id}`, (b) => { since.value = ev.id; reread(b); });
      return el('tr', { 'data-id': ev.id },
        cell(when(ev.timestamp), ev.timestamp), cell(ev.type.toLowerCase()), cell(name, item.id),
        ...m.columns.filter((c) => c.kind === 'object').map((c) => cell(columnText(c, item))),
        el('td', {}, el('code', {}, ev.id)),
        el('td', { className: 'actions' }, open, newer));
    }

    function titleOfItem(item) {
      return String(item[m.title] ?? item.id);
    }

    const live = liveToggle(liveBox, {
      query: () => q.tail,
      // From the newest event on screen, else the since filter's.
      vars() {
        const first = rows.querySelector('tr[data-id]');
        return { types: chosenTypes(), after: (onFirst && first ? first.dataset.id : null) || since.value.trim() || null };
      },
      onEvent(ev) {
        if (!onFirst) return;
        const tr = row(ev);
        tr.classList.add('fresh');
        rows.prepend(tr);
        notice(note, 'Live: new events show on top as they are committed.');
      },
      say: (text, isError) => notice(note, text, isError),
      ready: () => q !== null,
      words: {
        started: 'Live: new events show on top as they are committed.',
        ended: 'The live tail ended; tick Live tail to follow again.',
        stopped: 'The live tail stopped',
      },
    });

    // reread reads the first page again for new filters (control: what
    // the user changed); a live tail follows from there with them.
    async function reread(control) {
      const wasLive = live.running();
      live.stop();
      const ok = await act(control, () => pages.reload(true), { since });
      if (wasLive && ok) live.start();
    }

    $('events-filters').addEventListener('submit', (ev) => {
      ev.preventDefault();
      reread(ev.target.querySelector('button[type=submit]'));
    });

    return {
      async open() {
        try {
          m = await model();
          if (!q) {
            const eventSel = `${m.eventLeaves} item { ${m.eventSel} }`;
            q = {
              list: `query AdminEvents($types: [${m.eventTypes}!], $since: ID, $after: Cursor) {
  events(types: $types, since: $since, after: $after, first: ${pageSize}) {
    pageInfo { hasNextPage endCursor }
    edges { node { ${eventSel} } }
  }
}`,
              tail: `subscription AdminEventTail($types: [${m.eventTypes}!], $after: ID) { itemEvents(types: $types, after: $after) { ${eventSel} } }`,
            };
          }
          if (!typesBox.querySelector('input')) {
            $('events-head').replaceChildren(...['When', 'Type', 'Item',
              ...m.columns.filter((c) => c.kind === 'object').map((c) => S.label(c.field.name)), 'Event'].map((h) => el('th', { scope: 'col' }, h)),
            el('th', { scope: 'col' }, el('span', { className: 'sr-only' }, 'Actions')));
            for (const t of m.s.enumValues(m.eventTypes)) {
              const id = `events-type-${t}`;
              const box = el('input', { type: 'checkbox', id, value: t });
              box.addEventListener('change', () => reread(box));
              typesBox.append(box, el('label', { htmlFor: id }, t.toLowerCase()));
            }
          }
          if (!live.running()) await pages.reload(true);
        } catch (e) {
          notice(note, e.message, true);
        }
      },
      reset() {
        live.stop();
        rows.replaceChildren();
        since.value = '';
        for (const c of typesBox.querySelectorAll('input')) c.checked = false;
        pages.reset();
        notice(note, '');
      },
    };
  })();

  // Each page reads its first page when it is shown (one small query), and
  // forgets what it read when the session changes.
  for (const [name, view] of Object.entries({ browse: items, events, users, keys, webhooks, audit, backups, health })) pg.register(name, view);
})();
