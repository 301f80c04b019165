// Admin → Agents: the discovery agents the monitor service asks when a check fails (docs/alerting.md "Enrichment").
// Lists GET /agents (url, hosts, whether a token and a CA are stored — never their values); registers or changes one
// with POST /agents/{name} (token and CA write-only: a new url needs the token again, the server says so); deletes.
// @ts-check
import { h, setChildren, toast, confirmDialog, fmtTime } from '../util.js';
import { api } from '../api.js';

/** @typedef {import('../types.js').Agent} Agent */

/** @type {import('./admin.js').KvField[]} */
const FIELDS = [
  { k: 'name', help: 'A-Z a-z 0-9 _ . -' },
  { k: 'url', placeholder: 'https://db-1.example:8070', help: "the agent's https origin" },
  { k: 'hosts', placeholder: 'db-1, 10.0.0.5', help: 'comma-separated host names and addresses monitors target' },
  {
    k: 'token',
    secret: true,
    help: "component token from the agent's /loginComponent1Year or /loginComponent15Years; required when url changes",
  },
  { k: 'caCert', label: 'CA certificate (PEM)', multiline: true, help: "empty: trust this service's own CA" },
];

/**
 * @param {HTMLElement} box
 * @param {import('./admin.js').KvForm} kvForm  admin.js's key/value form
 */
export async function agents(box, kvForm) {
  /** @type {Agent[]} */
  const list = await api.get('/agents');
  /** @type {(a: Agent | undefined) => HTMLFormElement} */
  const edit = (a) => {
    const vals = a ? { name: a.name, url: a.url, hosts: a.hosts.join(', '), token: a.tokenSet ? 'set' : '' } : {};
    return kvForm(
      FIELDS,
      vals,
      async (c) => {
        const name = c.name ?? vals.name ?? '';
        /** @type {{ url?: string, hosts?: string[], token?: string, caCert?: string }}  POST /agents/{name}'s body */
        const body = {};
        if (c.url !== undefined) body.url = c.url;
        if (c.hosts !== undefined)
          body.hosts = c.hosts
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean);
        if (c.token) body.token = c.token;
        if (c.caCert !== undefined) body.caCert = c.caCert;
        await api.post(`/agents/${encodeURIComponent(name)}`, body);
        await agents(box, kvForm);
        return {};
      },
      { submitLabel: a ? `Save ${a.name}` : 'Register agent', idPrefix: a ? `${a.name}-` : 'new-' },
    );
  };
  setChildren(
    box,
    h(
      'div.card#agents',
      h('h2', 'Discovery agents'),
      h(
        'p.muted',
        'When a tcp, url, api or db check against one of these hosts fails, the agent is asked what listens on the ' +
          'port; alerts and the monitor page show what it found.',
      ),
      list.length
        ? h(
            'ul.plain',
            list.map((a) =>
              h(
                'li.agent',
                h('code', a.name),
                ` ${a.url} — ${a.hosts.join(', ')} `,
                h('span.muted', `token ${a.tokenSet ? 'stored' : 'missing'}, CA ${a.caCertSet ? 'own' : 'service'}; `),
                h('span.muted', `updated ${fmtTime(a.updatedMs)}${a.updatedBy ? ` by ${a.updatedBy}` : ''} `),
                h('details', h('summary', 'Change'), edit(a)),
                h(
                  'button.btn.small.danger',
                  {
                    type: 'button',
                    onclick: async () => {
                      if (
                        !(await confirmDialog(
                          `Delete agent ${a.name}?`,
                          'Failing checks will no longer ask it.',
                          'Delete',
                        ))
                      )
                        return;
                      await api
                        .del(`/agents/${encodeURIComponent(a.name)}`)
                        .catch((/** @type {Error} */ e) => toast(e.message, 'error'));
                      await agents(box, kvForm);
                    },
                  },
                  'Delete',
                ),
              ),
            ),
          )
        : h('p.muted', 'No agents registered.'),
    ),
    h('div.card', h('h2', 'Register an agent'), edit(undefined)),
  );
}
