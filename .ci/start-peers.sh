#!/usr/bin/env bash
# Starts the protocol peers the ping/nslookup/snmp/db tests and bench/protocols.ts talk to, on loopback only.
# Idempotent: a peer that already answers is left alone. Installs nothing (.ci/run does the apt part).
#   snmpd     udp 127.0.0.1:16161   (-I -smux: opens nothing else), community + v3 users, see docs/checks-protocols.md
#   dnsmasq   127.0.0.1:15353 and [::1]:15353, zone lab.test (A, AAAA, CNAME, MX, TXT, NS, SOA), --local=/lab.test/
#   PostgreSQL 127.0.0.1:5432 and MariaDB 127.0.0.1:3306 (the machine's own; started if they are down),
#   each with a read-only user monitor_ro / ro-pass on database test.
set -euo pipefail

STATE="${PEERS_STATE:-/tmp/sentinel-peers}"
mkdir -p "$STATE"
log() { echo "[start-peers] $*"; }

udp_listening() { ss -Hlun "sport = :$1" 2>/dev/null | grep -q .; }

# ---------- snmpd ----------
SNMP_COMMUNITY="${SNMP_COMMUNITY:-lab-public}"
SNMP_AUTH_PASS="authpass123"
SNMP_PRIV_PASS="privpass123"
start_snmpd() {
  if udp_listening 16161; then log "snmpd already on udp 127.0.0.1:16161"; return; fi
  local d="$STATE/snmpd"
  rm -rf "$d"; mkdir -p "$d/persist"
  local conf="$d/snmpd.conf"
  {
    echo "agentaddress udp:127.0.0.1:16161"
    echo "view all included .1"
    echo "rocommunity $SNMP_COMMUNITY 127.0.0.1 -V all"
    echo "sysLocation sentinel-lab"
    echo "sysContact lab@lab.test"
    echo "sysServices 72"
    echo "createUser mon-noauth"
    echo "rouser mon-noauth noauth -V all"
    for a in MD5 SHA SHA-224 SHA-256 SHA-384 SHA-512; do
      local an; an=$(echo "$a" | tr -d '-' | tr 'A-Z' 'a-z')
      echo "createUser mon-$an $a $SNMP_AUTH_PASS"
      echo "rouser mon-$an auth -V all"
      for p in DES AES AES192 AES256 AES192C AES256C; do
        local pn; pn=$(echo "$p" | tr 'A-Z' 'a-z')
        echo "createUser mon-$an-$pn $a $SNMP_AUTH_PASS $p $SNMP_PRIV_PASS"
        echo "rouser mon-$an-$pn priv -V all"
      done
    done
  } > "$conf"
  SNMP_PERSISTENT_DIR="$d/persist" MIBS= MIBDIRS=/nonexistent \
    snmpd -C -c "$conf" -I -smux -p "$d/snmpd.pid" -Lf "$d/snmpd.log"
  for _ in $(seq 1 50); do udp_listening 16161 && break; sleep 0.1; done
  udp_listening 16161 || { log "snmpd failed to start"; cat "$d/snmpd.log" || true; return 1; }
  log "snmpd started (pid $(cat "$d/snmpd.pid"))"
}

# ---------- dnsmasq ----------
# wire-format hex of a domain name, for --dns-rr
wire_name() {
  local out="" label
  IFS='.' read -ra parts <<< "$1"
  for label in "${parts[@]}"; do out+=$(printf '%02x' "${#label}"); out+=$(printf '%s' "$label" | od -An -tx1 | tr -d ' \n'); done
  echo "${out}00"
}
start_dnsmasq() {
  if udp_listening 15353; then log "dnsmasq already on 127.0.0.1:15353"; return; fi
  local d="$STATE/dnsmasq"; mkdir -p "$d"
  local soa; soa="$(wire_name ns1.lab.test)$(wire_name hostmaster.lab.test)"
  soa+=$(printf '%08x%08x%08x%08x%08x' 2024010101 3600 600 86400 300)
  dnsmasq -C /dev/null --pid-file="$d/dnsmasq.pid" --log-facility="$d/dnsmasq.log" \
    --port=15353 --listen-address=127.0.0.1 --listen-address=::1 --bind-interfaces \
    --no-resolv --no-hosts --no-poll --local=/lab.test/ --user=nobody \
    --host-record=www.lab.test,127.0.0.10,fd00::10 \
    --host-record=dual.lab.test,127.0.0.11,::1 \
    --host-record=mail.lab.test,127.0.0.20 --host-record=mail2.lab.test,127.0.0.21 \
    --cname=alias.lab.test,www.lab.test \
    --mx-host=lab.test,mail.lab.test,10 --mx-host=lab.test,mail2.lab.test,20 \
    --txt-record=lab.test,"v=spf1 -all" \
    --txt-record=multi.lab.test,"part one ","part two" \
    --dns-rr=lab.test,2,"$(wire_name ns1.lab.test)" \
    --dns-rr=lab.test,6,"$soa" \
    --host-record=ns1.lab.test,127.0.0.53
  for _ in $(seq 1 50); do udp_listening 15353 && break; sleep 0.1; done
  udp_listening 15353 || { log "dnsmasq failed to start"; cat "$d/dnsmasq.log" || true; return 1; }
  log "dnsmasq started (pid $(cat "$d/dnsmasq.pid"))"
}

# ---------- PostgreSQL ----------
start_postgres() {
  if ! pg_isready -q -h 127.0.0.1 -p 5432; then
    log "starting PostgreSQL"
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start
    for _ in $(seq 1 50); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.2; done
  fi
  psql -q -h 127.0.0.1 -U postgres -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname='test'" | grep -q 1 \
    || psql -q -h 127.0.0.1 -U postgres -d postgres -c "CREATE DATABASE test"
  psql -q -h 127.0.0.1 -U postgres -d test <<'SQL'
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'monitor_ro') THEN
    CREATE ROLE monitor_ro LOGIN PASSWORD 'ro-pass';
  END IF;
END $$;
GRANT CONNECT ON DATABASE test TO monitor_ro;
GRANT pg_read_all_data TO monitor_ro;
SQL
  log "PostgreSQL ready on 127.0.0.1:5432 (monitor_ro)"
}

# ---------- MariaDB ----------
start_mariadb() {
  if ! mariadb-admin -h127.0.0.1 -P3306 -uroot ping >/dev/null 2>&1; then
    log "starting MariaDB"
    start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd
    for _ in $(seq 1 100); do mariadb-admin -h127.0.0.1 -P3306 -uroot ping >/dev/null 2>&1 && break; sleep 0.2; done
  fi
  mariadb -h127.0.0.1 -P3306 -uroot <<'SQL'
CREATE DATABASE IF NOT EXISTS test;
CREATE USER IF NOT EXISTS 'monitor_ro'@'127.0.0.1' IDENTIFIED BY 'ro-pass';
CREATE USER IF NOT EXISTS 'monitor_ro'@'localhost' IDENTIFIED BY 'ro-pass';
GRANT SELECT ON test.* TO 'monitor_ro'@'127.0.0.1';
GRANT SELECT ON test.* TO 'monitor_ro'@'localhost';
SQL
  log "MariaDB ready on 127.0.0.1:3306 (monitor_ro)"
}

only="${1:-all}"
case "$only" in
  all) start_snmpd; start_dnsmasq; start_postgres; start_mariadb ;;
  snmpd) start_snmpd ;;
  dnsmasq) start_dnsmasq ;;
  postgres) start_postgres ;;
  mariadb) start_mariadb ;;
  *) echo "usage: $0 [all|snmpd|dnsmasq|postgres|mariadb]" >&2; exit 2 ;;
esac
