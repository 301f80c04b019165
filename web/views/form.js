// Create/edit forms for every monitor type. The field list of each type comes from the OpenAPI document's request
// schema of POST /<type>/create (so new fields appear without UI changes); choices from its enums and validate.js;
// the notification fields of the channels (notifyChannels, opt-outs) from GET /alerting/catalog. Required fields are
// the schema's `required`, secrets its `writeOnly` fields, the type list its `/<type>/create` paths: nothing is read
// out of description text.
// @ts-check
import { h, toast } from '../util.js';
import { api, openApiDoc, monitorTypes } from '../api.js';
import { refreshNow } from '../monitors-store.js';
import { rememberGenerated } from './push-card.js';
import { CHOICES, TEXTAREAS, validateMonitor, fieldOf } from '../validate.js';

/** @typedef {import('../api.js').ApiError} ApiError */
/** @typedef {HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement | HTMLButtonElement} FormControl */

/** @type {Array<[string, string[]]>} */
const GROUPS = [
  ['Basics', ['name', 'display_name']],
  ['Schedule', ['sched', 'schedCron', 'state']],
  ['Where', ['probe', 'location', 'tags']],
  ['Limits and thresholds', ['timeout', 'retries', 'threshMin', 'threshMaj', 'threshCri']],
];
const NOTIFY = ['notifyStatus', 'notifyAfter', 'renotifyMinutes', 'emailOnF', 'emailR', 'notifyChannels'];
const DEFAULTS = { sched: '5MIN', state: 'on', probe: 'default' };
/** Fields the forms never show: managedBy is written by `sentinel apply` only (the edit page shows a banner). */
const HIDDEN = ['managedBy'];

/** @typedef {import('../types.js').FieldSchema} FieldSchema */

/** @type {Promise<import('../types.js').CatalogEntry[]> | undefined} */
let catalog;
/** The channel catalog (GET /alerting/catalog), fetched once. */
export function channelCatalog() {
  catalog ??= /** @type {Promise<import('../types.js').CatalogEntry[]>} */ (api.get('/alerting/catalog')).catch(
    (/** @type {Error} */ e) => {
      catalog = undefined;
      throw e;
    },
  );
  return catalog;
}

/**
 * What the form of a type is built from: its fields' schemas, required ones, secrets, groups.
 * @param {string} type
 */
export async function typeMeta(type) {
  const [doc, channels, types] = await Promise.all([openApiDoc(), channelCatalog().catch(() => []), monitorTypes()]);
  const op = doc.paths[`/${type}/create`]?.post;
  if (!op) throw new Error(`unknown monitor type ${type}`);
  const body = op.requestBody.content['application/json'].schema;
  const schema = body.properties;
  for (const [k, s] of Object.entries(schema))
    if (s.anyOf && !CHOICES[k]) CHOICES[k] = s.anyOf.flatMap((a) => a.enum || []).filter((v) => v !== '');
  /** @type {Array<[string, string[]]>} */
  const groups = [...GROUPS, ['Notifications', [...NOTIFY, ...channels.flatMap((c) => Object.keys(c.monitorFields))]]];
  const req = body.required ?? ['name'];
  const sec = Object.keys(schema).filter((k) => schema[k].writeOnly);
  return {
    type,
    types,
    schema,
    required: new Set(req),
    secrets: new Set(sec),
    groups,
    common: new Set([...groups.flatMap((g) => g[1]), ...HIDDEN]),
  };
}

/** @typedef {Awaited<ReturnType<typeof typeMeta>>} TypeMeta */

/**
 * One field: its label, control (select for choices, textarea, password for secrets, else text), help and error.
 * @param {string} k
 * @param {FieldSchema} s
 * @param {TypeMeta} meta
 * @param {string | undefined} value
 * @param {boolean} editing
 * @param {Set<string>} secretSet  the secrets the monitor has stored
 */
function input(k, s, meta, value, editing, secretSet) {
  const id = `f-${k}`;
  const attrs = { id, name: k, 'aria-describedby': `${id}-help ${id}-err` };
  let el;
  if (CHOICES[k]) {
    el = h(
      'select',
      attrs,
      meta.required.has(k) ? null : h('option', { value: '' }, '(default)'),
      CHOICES[k].map((c) => h('option', { value: c }, c)),
    );
  } else if (TEXTAREAS.has(k)) el = h('textarea', { ...attrs, rows: k === 'steps' ? 10 : 4, spellcheck: 'false' });
  else if (meta.secrets.has(k))
    el = h('input', {
      ...attrs,
      type: 'password',
      autocomplete: 'new-password',
      placeholder: secretSet.has(k) ? 'stored — leave blank to keep' : '',
    });
  else
    el = h('input', {
      ...attrs,
      type: 'text',
      inputmode: /^(port|dbPort|timeout|retries|thresh|notifyAfter|renotifyMinutes)/.test(k) ? 'decimal' : undefined,
    });
  el.value = value ?? '';
  if (k === 'name' && editing) el.disabled = true;
  const req = meta.required.has(k);
  return h(
    `div.field${TEXTAREAS.has(k) ? '.wide' : ''}`,
    h('label', { for: id }, k, req ? h('span.req', { 'aria-label': 'required' }, ' *') : null),
    el,
    h('small.help', { id: `${id}-help` }, s.description || ''),
    h('small.field-err', { id: `${id}-err`, role: 'alert' }),
  );
}

/**
 * Builds the form; onSubmit(values) → Promise (throws ApiError).
 * @param {HTMLElement} root
 * @param {TypeMeta} meta
 * @param {Record<string, unknown>} initial  field → value: the values kept on create, or the monitor (whose schema
 *   fields are strings)
 * @param {{ editing: boolean, secretSet?: Set<string>, onType?: (type: string) => void, submitLabel: string,
 *   onSubmit: (vals: Record<string, string>) => Promise<void> }} opts
 */
function buildForm(root, meta, initial, { editing, secretSet = new Set(), onType, submitLabel, onSubmit }) {
  const typeSpecific = Object.keys(meta.schema).filter((k) => !meta.common.has(k));
  /** @type {Array<[string, string[]]>} */
  const groups = [
    /** @type {[string, string[]]} */ (meta.groups[0]),
    [`${meta.type} settings`, typeSpecific],
    ...meta.groups.slice(1),
  ];
  const formErr = h('p.form-error', { role: 'alert', hidden: true });
  const submit = h('button.btn.primary', { type: 'submit' }, submitLabel);
  const typeSel = editing
    ? null
    : h(
        'select#f-type',
        {
          name: '__type',
          onchange: (/** @type {Event} */ e) => onType?.(/** @type {HTMLSelectElement} */ (e.target).value),
        },
        meta.types.map((t) => h('option', { value: t, selected: t === meta.type }, t)),
      );
  const form = h(
    'form.mform',
    { novalidate: true },
    typeSel ? h('div.field', h('label', { for: 'f-type' }, 'Type'), typeSel) : null,
    groups.map(([title, keys], gi) => {
      const fields = keys
        .filter((k) => meta.schema[k])
        .map((k) => input(k, meta.schema[k], meta, /** @type {string | undefined} */ (initial[k]), editing, secretSet));
      if (!fields.length) return null;
      return gi < 4
        ? h('fieldset', h('legend', title), h('div.grid', fields))
        : h('details.fs', h('summary', title), h('div.grid', fields));
    }),
    formErr,
    h(
      'div.row-end',
      h(
        'button.btn',
        { type: 'button', onclick: () => (history.length > 1 ? history.back() : (location.hash = '#/')) },
        'Cancel',
      ),
      submit,
    ),
  );

  const values = () =>
    Object.fromEntries(
      /** @type {FormControl[]} */ ([...form.elements])
        .filter((e) => e.name && e.name !== '__type')
        .map((e) => [e.name, e.value]),
    );
  /** @param {Record<string, string | undefined>} errs */
  function showErrors(errs) {
    for (const el of form.querySelectorAll('.field')) {
      const ctl = /** @type {FormControl | null} */ (el.querySelector('input,select,textarea'));
      const msg = ctl ? errs[ctl.name] : undefined;
      el.classList.toggle('invalid', !!msg);
      ctl?.setAttribute('aria-invalid', msg ? 'true' : 'false');
      const box = el.querySelector('.field-err');
      if (box) box.textContent = msg || '';
      if (msg) el.closest('details')?.setAttribute('open', '');
    }
    const first = /** @type {FormControl | null} */ (
      form.querySelector('.field.invalid input, .field.invalid select, .field.invalid textarea')
    );
    first?.focus();
  }
  form.addEventListener('submit', (e) => void submitted(e));
  /** @param {SubmitEvent} e */
  async function submitted(e) {
    e.preventDefault();
    formErr.hidden = true;
    const vals = values();
    const errs = validateMonitor(vals, { ...meta, editing, secretSet });
    showErrors(errs);
    if (Object.keys(errs).length) return;
    submit.disabled = true;
    try {
      await onSubmit(vals);
    } catch (err) {
      const f = fieldOf(/** @type {ApiError} */ (err).field);
      if (f && form.elements.namedItem(f)) showErrors({ [f]: /** @type {Error} */ (err).message });
      else {
        formErr.textContent = /** @type {Error} */ (err).message;
        formErr.hidden = false;
      }
    } finally {
      submit.disabled = false;
    }
  }
  root.append(form);
  return form;
}

/**
 * @param {HTMLElement} root
 * @param {string} type
 */
export function mountCreate(root, type) {
  const page = h('section.page', h('p.crumbs', h('a', { href: '#/' }, '← Monitors')), h('h1', 'New monitor'));
  root.append(page);
  let alive = true;
  /** @type {Record<string, string>} */
  let keep = { ...DEFAULTS };
  /** @param {string} t */
  async function render(t) {
    const known = await monitorTypes().catch(() => /** @type {string[]} */ ([]));
    const meta = await typeMeta(known.includes(t) ? t : 'url').catch(
      (/** @type {Error} */ e) => (page.append(h('p.form-error', e.message)), null),
    );
    if (!alive || !meta) return;
    page.querySelector('form')?.remove();
    buildForm(page, meta, keep, {
      editing: false,
      submitLabel: 'Create monitor',
      onType(nt) {
        const f = /** @type {HTMLFormElement} */ (page.querySelector('form'));
        keep = Object.fromEntries(
          /** @type {FormControl[]} */ ([...f.elements])
            .filter((e) => e.name && meta.common.has(e.name))
            .map((e) => [e.name, e.value]),
        );
        history.replaceState(null, '', `#/new/${nt}`);
        void render(nt);
      },
      async onSubmit(vals) {
        const body = Object.fromEntries(Object.entries(vals).filter(([, v]) => v !== ''));
        /** @type {import('../types.js').SavedAnswer} */
        const r = await api.post(`/${meta.type}/create`, body);
        rememberGenerated(r.monitor.name, r.generated);
        toast(r.message);
        refreshNow();
        location.hash = `#/m/${meta.type}/${encodeURIComponent(r.monitor.sched)}/${encodeURIComponent(r.monitor.name)}`;
      },
    });
  }
  void render(type);
  return () => (alive = false);
}

/**
 * @param {HTMLElement} root
 * @param {string} type
 * @param {string} sched
 * @param {string} name
 */
export function mountEdit(root, type, sched, name) {
  const page = h(
    'section.page',
    h(
      'p.crumbs',
      h('a', { href: `#/m/${type}/${encodeURIComponent(sched)}/${encodeURIComponent(name)}` }, `← ${name}`),
    ),
    h('h1', `Edit ${name}`),
  );
  root.append(page);
  let alive = true;
  (async () => {
    const [meta, d] = await Promise.all([
      typeMeta(type),
      /** @type {Promise<import('../types.js').MonitorDetails>} */ (
        api.post('/getMonitorDetails', { type, name, sched })
      ),
    ]);
    if (!alive) return;
    const m = d.monitor;
    const secretSet = new Set(m.secretFieldsSet || []);
    if (m.managedBy)
      page.append(
        h(
          'p.form-error.managed',
          { role: 'note' },
          `This monitor is managed by the file ${m.managedBy}: a change made here is overwritten by the next ` +
            '`sentinel apply` of that file. Change the file instead.',
        ),
      );
    buildForm(page, meta, m, {
      editing: true,
      secretSet,
      submitLabel: 'Save changes',
      async onSubmit(vals) {
        /** @type {Record<string, string>} */
        const body = {};
        for (const [k, v] of Object.entries(vals)) {
          if (k === 'name') continue;
          if (meta.secrets.has(k) ? v !== '' : (m[k] ?? '') !== v) body[k] = v;
        }
        if (!Object.keys(body).length) return toast('Nothing changed.');
        /** @type {import('../types.js').SavedAnswer} */
        const r = await api.post(`/${type}/update/${encodeURIComponent(m.sched)}/${encodeURIComponent(name)}`, body);
        toast(r.message);
        refreshNow();
        location.hash = `#/m/${type}/${encodeURIComponent(r.monitor?.sched || m.sched)}/${encodeURIComponent(name)}`;
      },
    });
  })().catch((/** @type {Error} */ e) => alive && page.append(h('p.form-error', { role: 'alert' }, e.message)));
  return () => (alive = false);
}
