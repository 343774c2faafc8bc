// Builds the admin page's create form for items as web/assets/admin.js
// does (schema.js reads the schema by introspection, and form() makes a
// control for each field of createItem's input type) and prints its fields
// as JSON: {"input": "CreateItemInput", "fields": [{"name", "control",
// "type", "required"}]}, control being the element (input, select) and type
// an input's type (number, checkbox, datetime-local; "" for text).
//
//   node createform.mjs <path of web/assets/schema.js> <GraphQL endpoint URL>
//
// schema.js is the page's classic script, not a module: it runs here in a
// context whose window, document and Option are as much of a browser as
// its form() touches, and whose fetch is node's own.
import fs from 'node:fs';
import vm from 'node:vm';

const [schemaFile, endpoint] = process.argv.slice(2);
if (!schemaFile || !endpoint) {
  console.error('usage: node createform.mjs <schema.js> <GraphQL endpoint URL>');
  process.exit(2);
}

// Element keeps what schema.js sets on an element: properties, attributes,
// children (a select's are its options), classes and data attributes.
class Element {
  constructor(tag) {
    this.tagName = tag.toUpperCase();
    this.children = [];
    this.attributes = {};
    this.dataset = {};
    this.classList = new Set();
  }

  get options() {
    return this.children;
  }

  append(...nodes) {
    this.children.push(...nodes);
  }

  setAttribute(name, value) {
    this.attributes[name] = String(value);
  }
}

// Option is a select's option, as the browser's constructor makes it.
class Option extends Element {
  constructor(text, value) {
    super('option');
    this.text = text;
    this.value = value;
  }
}

const context = {
  document: {
    body: { dataset: { endpoint } },
    createElement: (tag) => new Element(tag),
  },
  Option,
  fetch,
  console,
};
context.window = context;
vm.createContext(context);
vm.runInContext(fs.readFileSync(schemaFile, 'utf8'), context, { filename: schemaFile });

const S = context.itemsvcSchema;
const s = await S.load();
const createName = s.argType(s.root('mutation', 'createItem'), 'input');
const built = S.form(s, createName, new Element('div'), { idPrefix: 'new-item' });
const fields = Object.entries(built.inputs).map(([name, input]) => ({
  name,
  control: input.tagName.toLowerCase(),
  type: input.type || '',
  required: input.required === true,
}));
console.log(JSON.stringify({ input: createName, fields }));
