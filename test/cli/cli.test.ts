/**
 * The `sentinel` CLI as a subprocess against real services on loopback: login (monitor and agent), every
 * subcommand, apply with plan / dry-run / prune / idempotence / file errors, export → apply round trip onto an empty
 * service, both importers (their output validated by a real service), completion and help, token refresh.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ADMIN_PASSWORD, startMonitor, type MonitorHarness } from '../support/monitor.harness.js';
import { HARNESS_ADMIN_PW, startAgent, type AgentHarness } from '../support/agent.harness.js';
import { makeCli, type Cli } from './cli.harness.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sentinel-files-'));
const write = (name: string, text: string) => {
  const p = path.join(tmp, name);
  fs.writeFileSync(p, text);
  return p;
};
const PW = { SENTINEL_PASSWORD: ADMIN_PASSWORD };

async function closedPort(): Promise<number> {
  const s = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => s.once('listening', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

describe('sentinel CLI against a monitor service', () => {
  let mon: MonitorHarness;
  let cli: Cli;
  let openPort: number;
  let deadPort: number;
  const server = net.createServer((c) => c.end());

  before(async () => {
    mon = await startMonitor();
    cli = makeCli();
    server.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    openPort = (server.address() as net.AddressInfo).port;
    deadPort = await closedPort();
  });
  after(async () => {
    server.close();
    await mon.stop();
  });

  const certDir = () => path.join(mon.dataDir, 'certs');

  test('login: a wrong password is the API message and exit 1; the right one saves a 0600 config', async () => {
    const bad = await cli.run(['login', '--server', mon.url, '--cert-dir', certDir()], { SENTINEL_PASSWORD: 'nope' });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /sentinel login: POST \/login: 401/);
    assert.doesNotMatch(bad.stderr, /at .*\.ts:\d+/, 'no stack trace');
    const ok = await cli.run(['login', '--server', mon.url, '--cert-dir', certDir()], PW);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /logged in to .* as admin until/);
    assert.equal(fs.statSync(cli.configDir).mode & 0o777, 0o700);
    assert.equal(fs.statSync(path.join(cli.configDir, 'config.json')).mode & 0o777, 0o600);
    // the password can come from stdin as well
    const piped = await cli.run(['login', '--server', mon.url, '--cert-dir', certDir()], {}, `${ADMIN_PASSWORD}\n`);
    assert.equal(piped.code, 0, piped.stderr);
  });

  test('without a login every command says how to log in (exit 2)', async () => {
    const other = makeCli();
    const r = await other.run(['status']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /run `sentinel login`/);
  });

  test('apply: plan, dry run, create, idempotent second apply, update with a diff, prune', async () => {
    const file = write(
      'monitors.yaml',
      `version: 1
monitors:
  - name: cli-open
    type: tcp
    sched: 1min
    ip: 127.0.0.1
    port: ${openPort}
    tags: [infra, cli]
  - name: cli-api
    type: api
    api: https://127.0.0.1:${openPort}/
    typeApi: get
    basicAuthUser: probe
    basicAuthPwd: \${CLI_API_PWD}
    state: off
`,
    );
    const env = { CLI_API_PWD: 'p4ss-word-from-env' };
    const dry = await cli.run(['apply', '-f', file, '--dry-run'], env);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /\+ create cli-open \(tcp\)/);
    assert.match(dry.stdout, /Plan: 2 to create, 0 to update, 0 to delete, 0 unchanged\./);
    assert.equal((await mon.admin.request('GET', '/monitors')).body.length, 0, 'a dry run changes nothing');

    const first = await cli.run(['apply', '-f', file], env);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /Applied 2 changes\./);
    const list = (await mon.admin.request('GET', '/monitors')).body as Array<Record<string, any>>;
    const api = list.find((m) => m.name === 'cli-api')!;
    assert.equal(api.managedBy, 'monitors.yaml');
    assert.deepEqual(api.secretFieldsSet, ['basicAuthPwd']);
    assert.ok(!JSON.stringify(list).includes('p4ss-word-from-env'), 'the secret is write-only');

    const second = await cli.json<{ plan: Array<{ kind: string }>; applied: number }>(['apply', '-f', file], env);
    assert.deepEqual(
      second.plan.map((c) => c.kind),
      ['unchanged', 'unchanged'],
      'a second apply plans nothing',
    );
    assert.equal(second.applied, 0);

    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('sched: 1min', 'sched: 5MIN'));
    const upd = await cli.run(['apply', '-f', file], env);
    assert.equal(upd.code, 0, upd.stderr);
    assert.match(upd.stdout, /~ update cli-open \(tcp\)\n {4}sched: "1MIN" → "5MIN"/);

    const keep = write('monitors.yaml', fs.readFileSync(file, 'utf8').replace(/ {2}- name: cli-api[\s\S]*$/, ''));
    const noPrune = await cli.run(['apply', '-f', keep], env);
    assert.match(noPrune.stdout, /0 to delete/, 'without --prune nothing is deleted');
    const pruned = await cli.run(['apply', '-f', keep, '--prune'], env);
    assert.equal(pruned.code, 0, pruned.stderr);
    assert.match(pruned.stdout, /- delete cli-api \(api\)/);
    assert.deepEqual(
      ((await mon.admin.request('GET', '/monitors')).body as Array<{ name: string }>).map((m) => m.name),
      ['cli-open'],
    );
  });

  test('apply: an invalid file names the file, line and field, and changes nothing (exit 2)', async () => {
    const literal = write(
      'bad-secret.yaml',
      'version: 1\nmonitors:\n  - name: leak\n    type: api\n    api: https://x.example/\n    basicAuthPwd: hunter2\n',
    );
    const r1 = await cli.run(['apply', '-f', literal]);
    assert.equal(r1.code, 2);
    assert.match(r1.stderr, /bad-secret\.yaml:6: leak: basicAuthPwd is a secret: write a reference/);
    const unknown = write(
      'bad-field.yaml',
      'version: 1\nmonitors:\n  - name: odd\n    type: tcp\n    ip: 127.0.0.1\n    port: 1\n    colour: blue\n',
    );
    const r2 = await cli.run(['apply', '-f', unknown]);
    assert.equal(r2.code, 2);
    assert.match(r2.stderr, /bad-field\.yaml:7: odd: colour: unknown field for a tcp monitor/);
    const missing = write('bad-required.yaml', 'version: 1\nmonitors:\n  - name: noip\n    type: tcp\n    port: 1\n');
    const r3 = await cli.run(['apply', '-f', missing]);
    assert.equal(r3.code, 2);
    assert.match(r3.stderr, /bad-required\.yaml:3: noip: ip: is required/);
    const noEnv = write(
      'bad-env.yaml',
      'version: 1\nmonitors:\n  - name: e\n    type: tcp\n    ip: ${NOT_SET_ANYWHERE}\n    port: 1\n',
    );
    const r4 = await cli.run(['apply', '-f', noEnv]);
    assert.equal(r4.code, 2);
    assert.match(r4.stderr, /bad-env\.yaml:5: e: ip: environment variable NOT_SET_ANYWHERE is not set/);
    const names = ((await mon.admin.request('GET', '/monitors')).body as Array<{ name: string }>).map((m) => m.name);
    assert.ok(!names.some((n) => ['leak', 'odd', 'noip', 'e'].includes(n)));
  });

  test('monitors list/get/run/enable/disable/delete, status exit codes, report', async () => {
    const file = write(
      'ops.yaml',
      `version: 1\nmonitors:\n  - name: cli-dead\n    type: tcp\n    ip: 127.0.0.1\n    port: ${deadPort}\n    tags: [cli]\n`,
    );
    assert.equal((await cli.run(['apply', '-f', file])).code, 0);
    const ran = await cli.json<{ status: string }>(['monitors', 'run', 'cli-open']);
    assert.equal(ran.status, 'OK');
    const okStatus = await cli.run(['status', '--tag', 'infra']);
    assert.equal(okStatus.code, 0, okStatus.stdout + okStatus.stderr);
    const dead = await cli.run(['monitors', 'run', 'cli-dead']);
    assert.match(dead.stdout, /cli-dead: DOWN/);
    const st = await cli.run(['status']);
    assert.equal(st.code, 3, 'a failing monitor makes status exit 3');
    assert.match(st.stdout, /cli-dead +tcp .* DOWN/);
    const list = await cli.json<Array<{ name: string }>>(['monitors', 'list', '--tag', 'cli']);
    assert.deepEqual(list.map((m) => m.name).sort(), ['cli-dead', 'cli-open']);
    const got = await cli.json<{ monitor: { name: string } }>(['monitors', 'get', 'cli-dead']);
    assert.equal(got.monitor.name, 'cli-dead');
    assert.equal((await cli.run(['monitors', 'disable', 'cli-dead'])).code, 0);
    assert.equal((await cli.run(['status'])).code, 0, 'an off monitor is not a problem');
    assert.equal((await cli.run(['monitors', 'enable', 'cli-dead'])).code, 0);
    const rep = await cli.json<{ timeline: { sharePct: Record<string, number> } }>([
      'report',
      'cli-open',
      '--range',
      '1h',
    ]);
    assert.equal(rep.timeline.sharePct.OK, 100);
    const badRange = await cli.run(['report', 'cli-open', '--range', 'forever']);
    assert.equal(badRange.code, 2);
    const del = await cli.run(['monitors', 'delete', 'cli-dead']);
    assert.equal(del.code, 0, del.stderr);
    const gone = await cli.run(['monitors', 'get', 'cli-dead']);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /no monitor named "cli-dead"/);
  });

  test('users and backup (admin)', async () => {
    const add = await cli.run(['users', 'add', 'cli-ops', '--group', 'readonly'], {
      SENTINEL_PASSWORD: 'a-Long-enough-pass-42',
    });
    assert.equal(add.code, 0, add.stderr);
    const us = await cli.json<Array<{ username: string; group: string }>>(['users']);
    assert.equal(us.find((u) => u.username === 'cli-ops')?.group, 'readonly');
    const set = await cli.run(['users', 'set', 'cli-ops', '--group', 'user', '--enabled', 'false']);
    assert.equal(set.code, 0, set.stderr);
    const after = await cli.json<Array<{ username: string; group: string; enabled: string }>>(['users']);
    assert.deepEqual(
      after.filter((u) => u.username === 'cli-ops').map((u) => [u.group, u.enabled]),
      [['user', 'false']],
    );
    assert.equal((await cli.run(['users', 'delete', 'cli-ops'])).code, 0);
    const b = await cli.run(['backup', '--json']);
    assert.equal(b.code, 0, b.stderr);
    assert.ok(JSON.parse(b.stdout));
  });

  test('export → apply onto an empty service reproduces the monitors', async () => {
    const withSecret = write(
      'secret.yaml',
      [
        'version: 1',
        'monitors:',
        '  - name: cli-basic',
        '    type: api',
        `    api: https://127.0.0.1:${openPort}/x`,
        '    typeApi: POST',
        `    body: '{"a":1}'`,
        '    headers: "Authorization:Bearer ${TOKEN1},Accept:text/plain"',
        '    basicAuthUser: u',
        '    basicAuthPwd: ${PW1}',
        '    schedCron: "*/2 * * * *"',
        '    threshCri: 900',
        '  - name: cli-userinfo',
        '    type: url',
        '    display_name: with a password in its URL',
        '    sched: 5MIN',
        '    state: off',
        '    probe: default',
        `    url: https://bob:\${URLPW}@127.0.0.1:${openPort}/`,
        '',
      ].join('\n'),
    );
    const secretEnv = { PW1: 'first-secret', TOKEN1: 'tok-value-1', URLPW: 'url-pass-1' };
    const first = await cli.run(['apply', '-f', withSecret], secretEnv);
    assert.equal(first.code, 0, first.stderr);
    const again = await cli.json<{ plan: Array<{ kind: string }> }>(['apply', '-f', withSecret], secretEnv);
    assert.deepEqual(
      again.plan.map((c) => c.kind),
      ['unchanged', 'unchanged'],
      `credentials in URLs and headers (shown as ***) compare equal: ${JSON.stringify(again.plan)}`,
    );
    const exported = await cli.run(['export']);
    assert.equal(exported.code, 0, exported.stderr);
    assert.match(exported.stdout, /basicAuthPwd: \$\{SENTINEL_CLI_BASIC_BASICAUTHPWD\}/);
    assert.match(exported.stdout, /url: https:\/\/bob:\$\{SENTINEL_CLI_USERINFO_URL_PASSWORD\}@127\.0\.0\.1/);
    assert.match(
      exported.stdout,
      /headers: Authorization:\$\{SENTINEL_CLI_BASIC_HEADERS_AUTHORIZATION\},Accept:text\/plain/,
    );
    for (const v of Object.values(secretEnv)) assert.ok(!exported.stdout.includes(v), `${v} is not exported`);
    assert.ok(!exported.stdout.includes('***'), 'no mask is written into a file');
    const file = write('exported.yaml', exported.stdout);

    const empty = await startMonitor();
    try {
      const cli2 = makeCli();
      const login = await cli2.run(
        ['login', '--server', empty.url, '--cert-dir', path.join(empty.dataDir, 'certs')],
        PW,
      );
      assert.equal(login.code, 0, login.stderr);
      const env = {
        SENTINEL_CLI_BASIC_BASICAUTHPWD: 'first-secret',
        SENTINEL_CLI_USERINFO_URL_PASSWORD: 'url-pass-1',
        SENTINEL_CLI_BASIC_HEADERS_AUTHORIZATION: 'Bearer tok-value-1',
      };
      const applied = await cli2.run(['apply', '-f', file], env);
      assert.equal(applied.code, 0, applied.stderr);
      const again = await cli2.run(['export']);
      assert.equal(again.stdout, exported.stdout, 'the second service exports the same file');
      const VOLATILE = new Set(['createdMs', 'updatedMs', 'last', 'nextDueMs', 'managedBy']);
      const strip = (ms: Array<Record<string, unknown>>) =>
        ms
          .map((m) => Object.fromEntries(Object.entries(m).filter(([k]) => !VOLATILE.has(k))))
          .sort((a, b) => String(a.name).localeCompare(String(b.name)));
      assert.deepEqual(
        strip((await empty.admin.request('GET', '/monitors')).body),
        strip((await mon.admin.request('GET', '/monitors')).body),
      );
    } finally {
      await empty.stop();
    }
  });

  test('import from Uptime Kuma and Gatus: the written files validate against the service', async () => {
    const kuma = await cli.run(['import', '--from', 'uptime-kuma', 'test/fixtures/cli/uptime-kuma-backup.json']);
    assert.equal(kuma.code, 0, kuma.stderr);
    assert.match(kuma.stderr, /imported 8 monitors, 2 not imported/);
    assert.match(kuma.stderr, /not imported: Nightly job: push \(heartbeat\)/);
    assert.match(kuma.stderr, /not imported: Cache: no Redis monitor type/);
    assert.match(kuma.stdout, /basicAuthPwd: \$\{IMPORT_LOGIN_API_BASICAUTHPWD\}/);
    assert.ok(!kuma.stdout.includes('hunter2'), 'no secret value is written');
    assert.match(kuma.stdout, /schedCron: "?\*\/2 \* \* \* \*"?/);
    const kumaFile = write('kuma.yaml', kuma.stdout);
    const env = { IMPORT_LOGIN_API_BASICAUTHPWD: 'x', IMPORT_ORDERS_DB_DBPWD: 'y' };
    const plan = await cli.run(['apply', '-f', kumaFile, '--dry-run'], env);
    assert.equal(plan.code, 0, plan.stderr);
    assert.match(plan.stdout, /Plan: 8 to create/);

    const gatus = await cli.json<{ monitors: Array<{ name: string; type: string }>; skipped: Array<{ name: string }> }>(
      ['import', '--from', 'gatus', 'test/fixtures/cli/gatus-config.yaml'],
    );
    assert.deepEqual(
      gatus.monitors.map((m) => `${m.name}:${m.type}`),
      ['website:url', 'api-health:api', 'postgres-port:tcp', 'gateway:ping', 'dns-example:nslookup'],
    );
    assert.deepEqual(
      gatus.skipped.map((s) => s.name),
      ['chat', 'backup-job'],
    );
    const gatusYaml = await cli.run(['import', '--from', 'gatus', 'test/fixtures/cli/gatus-config.yaml']);
    const gPlan = await cli.run(['apply', '-f', write('gatus.yaml', gatusYaml.stdout), '--dry-run']);
    assert.equal(gPlan.code, 0, gPlan.stderr);
    assert.match(gPlan.stdout, /Plan: 5 to create/);
    const wrong = await cli.run(['import', '--from', 'gatus', 'test/fixtures/cli/uptime-kuma-backup.json']);
    assert.equal(wrong.code, 2);
    assert.match(wrong.stderr, /not a Gatus configuration/);
  });

  test('help, unknown commands and options, completion', async () => {
    const help = await cli.run(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Commands:[\s\S]*apply[\s\S]*Examples:/);
    const sub = await cli.run(['apply', '--help']);
    assert.match(sub.stdout, /Examples:\n {2}sentinel apply -f monitors\.yaml --dry-run/);
    assert.equal((await cli.run(['frobnicate'])).code, 2);
    const badOpt = await cli.run(['status', '--colour']);
    assert.equal(badOpt.code, 2);
    assert.match(badOpt.stderr, /Unknown option '--colour'/);
    const bash = await cli.run(['completion', 'bash']);
    assert.match(bash.stdout, /complete -F _sentinel sentinel/);
    assert.match(bash.stdout, /monitors\) opts="list get run enable disable delete/);
    const zsh = await cli.run(['completion', 'zsh']);
    assert.match(zsh.stdout, /compdef _sentinel sentinel/);
  });

  test("apply prints a push monitor's generated token once (text and --json), and the token works", async () => {
    const file = write(
      'push.yaml',
      `version: 1
monitors:
  - name: cli-push
    type: push
    sched: 60min
    graceSeconds: 600
`,
    );
    const r = await cli.run(['apply', '-f', file]);
    assert.equal(r.code, 0, r.stderr);
    const m = /push cli-push: token (\S+) \(shown this once/.exec(r.stdout);
    assert.ok(m, `the token is printed: ${r.stdout}`);
    const ping = await mon.admin.request('GET', `/push/${m[1]}`, { token: null });
    assert.equal(ping.status, 200, `the printed token is the monitor's: ${ping.text}`);
    assert.equal((await mon.admin.request('GET', '/push/not-the-token', { token: null })).status, 404);
    const again = await cli.json<{ generated: unknown[] }>(['apply', '-f', file]);
    assert.deepEqual(again.generated, [], 'nothing is created, so nothing is generated');
    assert.equal((await mon.admin.request('DELETE', '/delete/exec/60MIN/cli-push')).status, 200);
    const json = await cli.json<{ generated: Array<{ name: string; type: string; generated: { token: string } }> }>([
      'apply',
      '-f',
      file,
    ]);
    assert.equal(json.generated.length, 1);
    assert.equal(json.generated[0]!.name, 'cli-push');
    assert.match(json.generated[0]!.generated.token, /^\S{20,}$/);
    assert.equal((await mon.admin.request('DELETE', '/delete/exec/60MIN/cli-push')).status, 200);
  });

  test('a token in its last quarter is refreshed and saved', async () => {
    const cfgFile = path.join(cli.configDir, 'config.json');
    const cfg = JSON.parse(fs.readFileSync(cfgFile, 'utf8'));
    const old = cfg.monitor.token;
    cfg.monitor.issuedMs = cfg.monitor.expiresMs - 10 * 24 * 3_600_000; // 24 h left of a "10-day" token
    fs.writeFileSync(cfgFile, JSON.stringify(cfg));
    assert.equal((await cli.run(['monitors'])).code, 0);
    const now = JSON.parse(fs.readFileSync(cfgFile, 'utf8'));
    assert.notEqual(now.monitor.token, old);
    assert.equal((await cli.run(['monitors'])).code, 0, 'the new token works');
  });
});

describe('sentinel CLI against a discovery agent', () => {
  let agent: AgentHarness;
  before(async () => {
    agent = await startAgent();
  });
  after(async () => agent.close());

  test('login --agent and users on the agent', async () => {
    const cli = makeCli();
    const login = await cli.run(
      ['login', '--agent', '--server', agent.url, '--cert-dir', path.join(agent.dataDir, 'certs')],
      { SENTINEL_PASSWORD: HARNESS_ADMIN_PW },
    );
    assert.equal(login.code, 0, login.stderr);
    const users = await cli.json<Array<{ username: string }>>(['users', '--agent']);
    assert.ok(users.some((u) => u.username === 'admin'));
    const noMonitor = await cli.run(['status']);
    assert.equal(noMonitor.code, 2, 'the agent login is not a monitor login');
    const out = await cli.run(['logout', '--agent']);
    assert.equal(out.code, 0);
    const gone = await cli.run(['users', '--agent']);
    assert.equal(gone.code, 2, 'after logout the agent needs a login again');
    assert.match(gone.stderr, /sentinel login --agent/);
  });
});
