/**
 * The monitor service's settings (POST /updateSetting) and SMTP settings (POST /setsmtpvault), with defaults.
 * Spec keys: logLevel, concurrencyLimit, dataRetention, autoThreshold, autoThresholdRange. Keys we add are listed
 * in the README's settings table (timezone for schedCron; networkAllow/networkDeny fence every monitor's sockets; vaultAddr
 * for exec monitors).
 */
import { LOG_LEVELS, type LogLevel } from '../../core/config/env.js';
import { SettingsService, validators as v, withSchema } from '../../core/settings/settings.service.js';
import { MAX } from '../../core/http/schemas.js';
import type { KvStore } from '../../core/storage/kv-store.js';
import type { SecretBox } from '../../core/secrets/secret-box.js';
import { AppError } from '../../core/errors.js';
import { isTimezone } from '../scheduler/zoned-time.js';
import { parseMailbox } from '../../core/notify/mailbox.js';
import { DEFAULT_DENY, parseCidrList } from '../monitor-types/lib/network-policy.js';

export const DEFAULT_CONCURRENCY = 256;
export const DEFAULT_MAX_MONITORS_PER_USER = 1000;

/**
 * Comma-separated CIDRs (IPv4 or IPv6; a bare address is one host); '' means none. Parsed by the network policy's own
 * parser (net.isIP per address, prefix within the family), so a value that passes here always builds the policy, and
 * stored normalised (`10.0.0.1` → `10.0.0.1/32`, no spaces).
 */
function cidrList(value: string, key: string): string {
  return parseCidrList(value, `body.${key}`).join(',');
}

export function createMonitorSettings(store: KvStore, box: SecretBox, logLevel: LogLevel): SettingsService {
  return new SettingsService(store, box, 'settings')
    .define('logLevel', {
      default: logLevel,
      description: 'trace, debug, info, warn or error; applies at once',
      validate: v.oneOf(LOG_LEVELS),
    })
    .define('concurrencyLimit', {
      default: String(DEFAULT_CONCURRENCY),
      description: 'maximum concurrent monitor executions (1-100000)',
      validate: v.positiveInt(100_000),
    })
    .define('dataRetention', {
      default: '720',
      description: 'hours raw results are kept (hourly rollups are kept longer)',
      validate: v.positiveInt(24 * 3650),
    })
    .define('autoThreshold', {
      default: 'false',
      description: "true: compute threshMin/Maj/Cri from each monitor's history",
      validate: v.bool(),
    })
    .define('autoThresholdRange', {
      default: '168',
      description: 'hours of history analysed by autoThreshold: 24, 168 or 720',
      validate: v.oneOf(['24', '168', '720']),
    })
    .define('timezone', {
      default: 'UTC',
      description:
        'IANA time zone (e.g. Europe/Berlin) schedCron expressions are read in, and next runs are shown in; applies at once',
      validate: (value, key) => {
        if (!isTimezone(value))
          throw AppError.badRequest(`${key}: ${value.slice(0, 64)} is not an IANA time zone`, `body.${key}`);
        return value;
      },
    })
    .define('networkAllow', {
      default: '',
      description:
        'comma-separated CIDRs monitors may connect to (every type that opens a socket, browser requests and WebSockets included); empty = any not denied',
      validate: withSchema(cidrList, { maxLength: MAX.list }),
    })
    .define('networkDeny', {
      default: DEFAULT_DENY.join(','),
      description:
        'comma-separated CIDRs no monitor may connect to: url, api, tcp, db, snmp, nslookup dnsServer, ping and every exec browser request and WebSocket (checked on the address connected, after every redirect; 0.0.0.0 and :: count as loopback)',
      validate: withSchema(cidrList, { maxLength: MAX.list }),
    })
    .define('artifactMaxBytesPerRun', {
      default: String(20 * 1024 * 1024),
      description:
        'bytes of screenshots, video and HAR one exec run may keep (default 20 MiB); files past it are deleted and listed in details.artifactsOverCap',
      validate: v.positiveInt(1024 ** 3),
    })
    .define('artifactMaxBytesTotal', {
      default: String(2 * 1024 ** 3),
      description:
        'bytes all exec run artifacts may take (default 2 GiB); past it whole run folders are deleted, oldest first',
      validate: v.positiveInt(1024 ** 4),
    })
    .define('harRedactHeaders', {
      default: '',
      description:
        'comma-separated header names exec HARs redact besides Cookie, Set-Cookie, Authorization and Proxy-Authorization (e.g. X-Api-Key)',
      validate: v.text(2048, /^[A-Za-z0-9!#$%&'*+.^_`|~-]+(\s*,\s*[A-Za-z0-9!#$%&'*+.^_`|~-]+)*$/),
    })
    .define('maxMonitorsPerUser', {
      default: String(DEFAULT_MAX_MONITORS_PER_USER),
      description:
        'monitors one user (group user) may have created; admins are exempt; create beyond it answers 409 (1-1000000)',
      validate: v.positiveInt(1_000_000),
    })
    .define('vaultAddr', {
      default: '',
      description: 'HashiCorp Vault address (https://host:8200) for {{vault:path#key}} references in exec monitors',
      validate: v.text(512, /^https?:\/\/\S+$/),
    })
    .define('vaultCaCert', {
      default: '',
      description: "PEM of the CA that signed Vault's certificate, or a path to it (empty: the system trust store)",
      validate: v.text(16_384),
    })
    .define('vaultNamespace', {
      default: '',
      description: 'Vault Enterprise namespace (X-Vault-Namespace), empty for none',
      validate: v.text(256, /^[A-Za-z0-9_./-]+$/),
    });
}

export function createSmtpSettings(store: KvStore, box: SecretBox): SettingsService {
  return new SettingsService(store, box, 'smtp')
    .define('smtpHost', { default: '', description: 'SMTP server host', validate: v.text(255, /^[A-Za-z0-9.:[\]-]+$/) })
    .define('smtpPort', { default: '587', description: 'SMTP port', validate: v.positiveInt(65535) })
    .define('smtpUser', { default: '', description: 'SMTP account', validate: v.text(255) })
    .define('smtpPassword', {
      default: '',
      description: 'SMTP password (write-only, encrypted at rest)',
      validate: v.text(1024),
      secret: true,
    })
    .define('smtpFrom', {
      default: '',
      description: 'sender: an address or "Display Name <address>", e.g. Sentinel <alerts@example.com>',
      validate: withSchema(
        (value, key) => {
          if (value !== '' && parseMailbox(value) === undefined)
            throw AppError.badRequest(
              `${key} must be an email address or "Name <address>" (got ${JSON.stringify(value.slice(0, 80))})`,
              `body.${key}`,
            );
          return value;
        },
        { maxLength: 320 },
      ),
    })
    .define('smtpEnabled', { default: 'false', description: 'true or false', validate: v.bool() })
    .define('smtpSecure', {
      default: 'starttls',
      description: 'starttls (upgrade, required), tls (implicit TLS, port 465) or none',
      validate: v.oneOf(['starttls', 'tls', 'none']),
    });
}
