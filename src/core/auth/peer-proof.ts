/**
 * Requests one instance of a service makes to another instance of the same service (a cluster's members,
 * docs/cluster.md), signed so the receiver knows a member sent them: routes with `config: { auth: 'cluster' }` accept
 * such a request and nothing else — no user's token, whatever its group (auth-guard.ts).
 *
 * The key is derived (HKDF-SHA256, its own label) from the service's JWT signing key, which every member of a cluster
 * shares already (docs/cluster.md "Shared keys"): no new secret to distribute, and a user, who never holds that key,
 * cannot make a proof. A proof binds the method, the whole request target (path and query) and an expiry:
 *
 *   X-Sentinel-Peer-Proof: v1.<expiresMs>.<base64url HMAC-SHA256 of "v1\n<METHOD>\n<target>\n<expiresMs>">
 *
 * It is accepted until it expires, and at most MAX_AHEAD_MS ahead of the receiver's clock (members' clocks differ a
 * little; a proof cannot be minted to last). Within that window a proof can be replayed for the same request only,
 * over mutual TLS; the routes it opens are reads. On run now and push pings it only makes a forwarded-request header
 * count (the monitor service's cluster-client.ts `forwardedByPeer`): the request is handled where it arrives.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const PEER_PROOF_HEADER = 'x-sentinel-peer-proof';

/** A proof is made to last this long. */
export const PEER_PROOF_TTL_MS = 30_000;
/** The furthest in the future an accepted proof may expire (its TTL plus clock skew between members). */
const MAX_AHEAD_MS = 2 * 60_000;

export class PeerProof {
  constructor(
    private readonly key: Buffer,
    private readonly now: () => number = Date.now,
  ) {}

  /** The header value for `method target` (target: the path with its query, as sent). */
  sign(method: string, target: string): string {
    const exp = this.now() + PEER_PROOF_TTL_MS;
    return `v1.${exp}.${this.mac(method, target, exp).toString('base64url')}`;
  }

  /** Why a request does not carry a valid proof for its own method and target (its URL as sent), or undefined. */
  checkRequest(req: { method: string; url: string; headers: Record<string, string | string[] | undefined> }) {
    const header = req.headers[PEER_PROOF_HEADER];
    return this.check(typeof header === 'string' ? header : undefined, req.method, req.url);
  }

  /** Why `header` is not a valid proof for `method target` now, or undefined when it is. */
  check(header: string | undefined, method: string, target: string): string | undefined {
    if (!header) return 'missing';
    const m = /^v1\.(\d{1,16})\.([A-Za-z0-9_-]{43})$/.exec(header);
    if (!m) return 'malformed';
    const exp = Number(m[1]);
    const now = this.now();
    if (exp < now) return 'expired';
    if (exp > now + MAX_AHEAD_MS) return 'expires too far ahead';
    const given = Buffer.from(m[2]!, 'base64url');
    const want = this.mac(method, target, exp);
    return given.length === want.length && timingSafeEqual(given, want) ? undefined : 'bad signature';
  }

  private mac(method: string, target: string, exp: number): Buffer {
    return createHmac('sha256', this.key).update(`v1\n${method.toUpperCase()}\n${target}\n${exp}`).digest();
  }
}
