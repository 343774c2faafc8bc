// The playground's admin pages beside the browsing view: users, API keys,
// webhooks with their deliveries, the audit trail, backups and the
// server's health. They run on the playground's sign-in (playground.js
// hands them its ask, which sends the tab's token) and use the same GraphQL
// fields as any client, each query a small one: a page of 20 read when it
// is shown or paged to, never on a timer, so that clicking around does not
// spend the key's rate limit (the health page polls /metrics, which costs
// no points). A failure shows beside the control that was used.
(function () {
  'use strict';

  const pg = window.itemsvcPlayground;
  if (!pg) return; // playground.js did not run; it says why
  const { ask, notice } = pg;
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
      actions: 'query AdminAuditActions { __type(name: "AuditAction") { enumValues { name } } }',
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
            const names = (await ask(q.actions)).__type.enumValues.map((v) => v.name);
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

  // Each page reads its first page when it is shown (one small query), and
  // forgets what it read when the session changes.
  for (const [name, view] of Object.entries({ users, keys, webhooks, audit, backups, health })) pg.register(name, view);
})();
