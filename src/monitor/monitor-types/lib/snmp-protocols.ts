/**
 * The SNMP field values the spec names (versions, v3 security levels, auth and privacy protocols): what the snmp
 * type's schema and validation need, without net-snmp, which loads at the first check (lib/snmp-session.ts).
 */
export const SNMP_VERSIONS = ['v1', 'v2c', 'v3'] as const;
export const SECURITY_LEVELS = ['noAuthNoPriv', 'authNoPriv', 'authPriv'] as const;
export const AUTH_PROTOCOLS = ['MD5', 'SHA', 'SHA224', 'SHA256', 'SHA384', 'SHA512'] as const;
export const PRIV_PROTOCOLS = ['DES', 'AES', 'AES192', 'AES256'] as const;
