// The GraphQL schema as the admin pages read it: one introspection query,
// sent when the page loads and kept for the page's life, from which the
// pages build their columns, sort options (the order field enums), filters
// (the where inputs), detail views and forms (the create and update
// inputs). A field added to the ent schema, and so to the GraphQL types,
// shows on the pages with no change to them. The query is sent without a
// token, as GraphiQL's is: the schema is the same for everyone, and the
// playground (which serves this page) allows anonymous introspection.
(function () {
  'use strict';

  const endpoint = document.body.dataset.endpoint;

  // The type references nest as deep as [[T!]!]! and one more.
  const typeRef = 'kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } }';
  const query = `query AdminSchema {
  __schema {
    queryType { name }
    mutationType { name }
    subscriptionType { name }
    types {
      kind name
      fields { name description args { name type { ${typeRef} } } type { ${typeRef} } }
      inputFields { name description defaultValue type { ${typeRef} } }
      enumValues { name }
    }
  }
}`;

  // Predicates an ent where input has for a field, by the suffix added to
  // the field's name, with what a filter row calls them.
  const predicates = [
    ['', 'is'], ['NEQ', 'is not'], ['In', 'is one of'], ['NotIn', 'is none of'],
    ['GT', 'after / above'], ['GTE', 'from / at least'], ['LT', 'before / below'], ['LTE', 'until / at most'],
    ['Contains', 'contains'], ['ContainsFold', 'contains (any case)'], ['HasPrefix', 'starts with'],
    ['HasSuffix', 'ends with'], ['EqualFold', 'is (any case)'], ['IsNil', 'is empty'], ['NotNil', 'is not empty'],
  ];

  // Schema wraps the introspection result with the lookups the pages use.
  class Schema {
    constructor(raw) {
      this.raw = raw;
      this.types = new Map(raw.types.map((t) => [t.name, t]));
    }

    type(name) {
      return this.types.get(name) || null;
    }

    // field returns field name of type typeName, or null.
    field(typeName, name) {
      const t = this.type(typeName);
      return (t && ((t.kind === 'INPUT_OBJECT' ? t.inputFields : t.fields) || []).find((f) => f.name === name)) || null;
    }

    // root returns a field of Query, Mutation or Subscription.
    root(kind, name) {
      const r = this.raw[`${kind}Type`];
      return r ? this.field(r.name, name) : null;
    }

    // argType names the named type of an argument of a field.
    argType(field, arg) {
      const a = field && field.args.find((x) => x.name === arg);
      return a ? named(a.type).name : null;
    }

    enumValues(name) {
      const t = this.type(name);
      return t && t.enumValues ? t.enumValues.map((v) => v.name) : [];
    }

    // inputFields lists the fields of an input type, in schema order.
    inputFields(name) {
      const t = this.type(name);
      return (t && t.inputFields) || [];
    }

    // leaves lists the fields of an object type that take no required
    // argument and are scalars or enums: what a selection can read as is.
    leaves(typeName) {
      const t = this.type(typeName);
      return ((t && t.fields) || []).filter((f) => isLeaf(this, f.type) && !f.args.some((a) => a.type.kind === 'NON_NULL'));
    }

    // objects lists the fields of an object type that are one object
    // (an edge such as an item's owner), not a list or a connection.
    objects(typeName) {
      const t = this.type(typeName);
      return ((t && t.fields) || []).filter((f) => {
        const n = named(f.type);
        return !isList(f.type) && n.kind === 'OBJECT' && !n.name.endsWith('Connection') && f.args.length === 0;
      });
    }

    // display is the field an object is shown by where it is named (an
    // item's owner by its email): its first String leaf that is not an id,
    // else its id.
    display(typeName) {
      const s = this.leaves(typeName).find((f) => named(f.type).name === 'String' && f.type.kind === 'NON_NULL');
      return s ? s.name : 'id';
    }

    // selection is what a query reads of an object: every leaf but those
    // left out, and each one-object edge's id and display field.
    selection(typeName, leaveOut) {
      const skip = new Set(leaveOut || []);
      const leaves = this.leaves(typeName).filter((f) => !skip.has(f.name)).map((f) => f.name);
      const objects = this.objects(typeName).filter((f) => !skip.has(f.name))
        .map((f) => `${f.name} { id ${this.display(named(f.type).name)} }`);
      return [...leaves, ...objects].join(' ');
    }

    // filterable lists the fields of a where input that filter one field
    // of the object (name, status…), each with its predicates: [{field,
    // predicates: [{name, suffix, label, type}]}], in schema order.
    filterable(whereName) {
      const inputs = this.inputFields(whereName);
      const byName = new Map(inputs.map((f) => [f.name, f]));
      const out = [];
      for (const f of inputs) {
        if (!isLeaf(this, f.type) || isList(f.type)) continue;
        // A field is one whose equality predicate is there under its own name
        // and that is not another field's predicate ("nameIn" is name's).
        if (out.some((o) => o.predicates.some((p) => p.name === f.name))) continue;
        if (!byName.has(`${f.name}NEQ`) && !byName.has(`${f.name}In`)) continue;
        out.push({
          field: f.name,
          predicates: predicates.filter(([suffix]) => byName.has(f.name + suffix))
            .map(([suffix, label]) => ({ name: f.name + suffix, suffix, label, type: byName.get(f.name + suffix).type })),
        });
      }
      return out;
    }
  }

  // named is the named type at the bottom of a type reference.
  function named(ref) {
    let t = ref;
    while (t.ofType) t = t.ofType;
    return t;
  }

  function isList(ref) {
    let t = ref;
    while (t) {
      if (t.kind === 'LIST') return true;
      t = t.ofType;
    }
    return false;
  }

  function isLeaf(schema, ref) {
    const k = named(ref).kind;
    return k === 'SCALAR' || k === 'ENUM';
  }

  // label turns a field name into words: createdAt → "Created at",
  // userID → "User ID".
  function label(name) {
    if (name === 'id') return 'ID';
    const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2').split(' ');
    return words.map((w, i) => (/^[A-Z]+$/.test(w) && w.length > 1 ? w : i === 0 ? w[0].toUpperCase() + w.slice(1) : w.toLowerCase())).join(' ');
  }

  // enumName turns a field name into the order field enum's spelling:
  // createdAt → CREATED_AT.
  function enumName(name) {
    return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
  }

  // localTime formats an RFC 3339 time for a datetime-local input, in local time.
  function localTime(iso) {
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return '';
    const p = (n) => String(n).padStart(2, '0');
    return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
  }

  // control makes the input for a value of type ref: String and ID a text
  // input, Int and Float a number input, Boolean a checkbox, an enum a
  // select (a list of enums: a multiple select), Time a datetime input,
  // another list a text input of comma-separated values, any other scalar
  // (or input object, as JSON) a text input. A non-null type is required.
  // props are set on it (id, aria-label); value fills it in.
  function control(schema, ref, value, props) {
    const t = named(ref);
    const required = ref.kind === 'NON_NULL';
    let input;
    if (t.kind === 'ENUM') {
      input = document.createElement('select');
      input.multiple = isList(ref);
      if (!required && !input.multiple) input.append(new Option('—', ''));
      for (const v of schema.enumValues(t.name)) input.append(new Option(v.toLowerCase().replace(/_/g, ' '), v));
      if (input.multiple) {
        const chosen = new Set(value || []);
        for (const o of input.options) o.selected = chosen.has(o.value);
      } else {
        input.value = value ?? (required ? input.options[0].value : '');
      }
    } else if (isList(ref)) {
      input = document.createElement('input');
      input.placeholder = 'comma-separated';
      input.value = (value || []).join(', ');
    } else if (t.name === 'Boolean') {
      input = document.createElement('input');
      input.type = 'checkbox';
      input.checked = value === true || value === 'true';
    } else {
      input = document.createElement('input');
      if (t.name === 'Int' || t.name === 'Float') {
        input.type = 'number';
        input.step = t.name === 'Int' ? '1' : 'any';
      } else if (t.name === 'Time') {
        input.type = 'datetime-local';
        input.step = '1';
      } else {
        input.spellcheck = false;
      }
      if (value !== null && value !== undefined) input.value = t.name === 'Time' ? localTime(value) : (typeof value === 'object' ? JSON.stringify(value) : String(value));
    }
    input.required = required && input.type !== 'checkbox';
    for (const [k, v] of Object.entries(props || {})) {
      if (k.includes('-')) input.setAttribute(k, v);
      else input[k] = v;
    }
    return tag(input, t, ref);
  }

  function tag(input, t, ref) {
    input.gqlType = t;
    input.gqlRef = ref;
    return input;
  }

  // read returns the value a control holds, as its GraphQL type takes
  // it, or undefined when it is empty (a checkbox is never empty).
  function read(input) {
    const t = input.gqlType;
    if (t.name === 'Boolean' && input.type === 'checkbox') return input.checked;
    if (input.tagName === 'SELECT' && input.multiple) {
      const vs = Array.from(input.selectedOptions, (o) => o.value);
      return vs.length ? vs : undefined;
    }
    const raw = input.value.trim();
    if (raw === '') return undefined;
    const one = (s) => {
      if (t.kind === 'INPUT_OBJECT') return JSON.parse(s);
      if (t.name === 'Int') return Number.parseInt(s, 10);
      if (t.name === 'Float') return Number(s);
      if (t.name === 'Boolean') return s === 'true';
      if (t.name === 'Time') return new Date(s).toISOString();
      return s;
    };
    if (isList(input.gqlRef) && input.tagName !== 'SELECT') return raw.split(',').map((s) => s.trim()).filter(Boolean).map(one);
    return one(t.name === 'String' ? input.value : raw);
  }

  // form builds the fields of input type typeName into container: a
  // label, the control and its description for each field. values fills
  // them in; idPrefix makes their ids. It returns {inputs (by field name),
  // read()}: read gives the input object, each empty field left out, or
  // with changedFrom only the fields whose value differs from it.
  function form(schema, typeName, container, opts) {
    const o = opts || {};
    const inputs = {};
    for (const f of schema.inputFields(typeName)) {
      const id = `${o.idPrefix}-${f.name}`;
      const value = o.values && f.name in o.values ? o.values[f.name] : defaultOf(f);
      const input = control(schema, f.type, value, { id, name: f.name });
      const wrap = document.createElement('span');
      wrap.className = 'field';
      wrap.dataset.field = f.name;
      const lab = document.createElement('label');
      lab.htmlFor = id;
      lab.textContent = label(f.name);
      if (input.type === 'checkbox') wrap.classList.add('check');
      wrap.append(lab, input);
      if (f.description) {
        const hint = document.createElement('small');
        hint.className = 'hint';
        hint.id = `${id}-hint`;
        hint.textContent = f.description;
        input.setAttribute('aria-describedby', hint.id);
        wrap.append(hint);
      }
      container.append(wrap);
      inputs[f.name] = input;
    }
    return {
      inputs,
      read() {
        const out = {};
        for (const [name, input] of Object.entries(inputs)) {
          const v = read(input);
          if (v === undefined) continue;
          if (o.changedFrom && same(v, o.changedFrom[name])) continue;
          out[name] = v;
        }
        return out;
      },
    };
  }

  function defaultOf(f) {
    if (f.defaultValue === null || f.defaultValue === undefined) return undefined;
    try {
      return JSON.parse(f.defaultValue);
    } catch (e) {
      return f.defaultValue; // an enum value, unquoted
    }
  }

  function same(a, b) {
    if (typeof a === 'string' && typeof b === 'string' && /^\d{4}-\d\d-\d\dT/.test(a)) return Date.parse(a) === Date.parse(b);
    return JSON.stringify(a) === JSON.stringify(b);
  }

  // show formats a value of type ref for a table cell or a detail view.
  function show(ref, value) {
    if (value === null || value === undefined) return '—';
    const t = named(ref);
    if (Array.isArray(value)) return value.map((v) => show(t, v)).join(', ');
    if (t.name === 'Time') return new Date(value).toLocaleString();
    if (t.kind === 'ENUM') return String(value);
    if (typeof value === 'object') return JSON.stringify(value);
    return String(value);
  }

  let loaded = null;

  // load runs the introspection query once and returns the Schema; a
  // failure is not kept, so that the next page shown asks again. Refused
  // without a token (the address's anonymous points spent, say), it is
  // asked again with the signed-in one, when there is one.
  function load() {
    if (!loaded) {
      loaded = anonymous().catch(async (e) => {
        const pg = window.itemsvcPlayground;
        if (!pg || !pg.viewer()) throw e;
        return new Schema((await pg.ask(query)).__schema);
      });
      loaded.catch(() => { loaded = null; });
    }
    return loaded;
  }

  // anonymous sends the introspection query without a token.
  async function anonymous() {
    let res;
    try {
      res = await fetch(endpoint, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify({ query, operationName: 'AdminSchema' }),
        credentials: 'omit',
      });
    } catch (e) {
      throw new Error(`reading the schema: GraphQL at ${endpoint} cannot be reached (${e.message})`);
    }
    const json = await res.json().catch(() => null);
    const err = json && json.errors && json.errors[0];
    if (err || !json || !json.data) {
      const code = err && err.extensions && err.extensions.code;
      throw new Error(`reading the schema failed: ${err ? err.message : `HTTP ${res.status}`}${code ? ` (${code})` : ''}`);
    }
    return new Schema(json.data.__schema);
  }
  load().catch(() => {}); // at page load; a page that needs it says why it failed

  window.itemsvcSchema = { load, named, isList, label, enumName, control, read, form, show, localTime, query };
})();
