/**
 * Disk usage per mounted real filesystem (fs.statfs over /proc/mounts) and disk I/O rates (/proc/diskstats deltas).
 * "Real" = a block device source (/dev/...) or a known disk/network filesystem type; pseudo filesystems (proc, sysfs,
 * tmpfs, cgroup, devpts, ...) are skipped, and so are bind mounts of a block device already listed (same usage). A mount that doesn't answer statfs within `timeoutMs` (a dead NFS server)
 * is reported with `error` instead of blocking the cycle.
 */
import { statfs } from 'node:fs/promises';
import { readProc, ratePerS, round2 } from './proc-read.js';

const REAL_FS = new Set([
  'ext2',
  'ext3',
  'ext4',
  'xfs',
  'btrfs',
  'zfs',
  'f2fs',
  'jfs',
  'reiserfs',
  'vfat',
  'exfat',
  'ntfs',
  'ntfs3',
  'fuseblk',
  'overlay',
  'nfs',
  'nfs4',
  'cifs',
  'smb3',
  'ceph',
  'glusterfs',
  'hfsplus',
  'apfs',
]);

export interface MountEntry {
  device: string;
  mountPoint: string;
  fsType: string;
}

export interface DiskUsage extends MountEntry {
  totalBytes: number;
  usedBytes: number;
  availableBytes: number;
  /** Used share of what non-root users can use: used / (used + available), as df computes it. */
  usedPct: number;
  error?: string;
}

/** Decodes the octal escapes /proc/mounts uses for spaces, tabs, newlines and backslashes. */
function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(Number.parseInt(o, 8)));
}

export function parseMounts(text: string): MountEntry[] {
  const seen = new Set<string>();
  const out: MountEntry[] = [];
  for (const line of text.split('\n')) {
    const [device, mp, fsType] = line.split(' ');
    if (!device || !mp || !fsType) continue;
    const real = REAL_FS.has(fsType) || (device.startsWith('/dev/') && !fsType.startsWith('tmpfs'));
    const mountPoint = unescapeMount(mp);
    // A bind mount of the same block device reports the same usage: keep the first (mount order: the original).
    const id = device.startsWith('/dev/') ? device : mountPoint;
    if (!real || seen.has(id) || seen.has(mountPoint)) continue;
    seen.add(id).add(mountPoint);
    out.push({ device: unescapeMount(device), mountPoint, fsType });
  }
  return out;
}

async function usageOf(m: MountEntry, timeoutMs: number): Promise<DiskUsage> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`statfs timed out after ${timeoutMs} ms`)), timeoutMs);
    });
    const s = await Promise.race([statfs(m.mountPoint), timeout]);
    const totalBytes = s.blocks * s.bsize;
    const usedBytes = (s.blocks - s.bfree) * s.bsize;
    const availableBytes = s.bavail * s.bsize;
    const denom = usedBytes + availableBytes;
    return { ...m, totalBytes, usedBytes, availableBytes, usedPct: denom > 0 ? round2((usedBytes * 100) / denom) : 0 };
  } catch (e) {
    return { ...m, totalBytes: 0, usedBytes: 0, availableBytes: 0, usedPct: 0, error: (e as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

export async function readDiskUsage(opts: { procRoot?: string; timeoutMs?: number } = {}): Promise<DiskUsage[]> {
  const text = readProc(`${opts.procRoot ?? '/proc'}/mounts`) ?? '';
  return Promise.all(parseMounts(text).map((m) => usageOf(m, opts.timeoutMs ?? 2000)));
}

export interface DiskIoCounters {
  device: string;
  reads: number;
  writes: number;
  readBytes: number;
  writeBytes: number;
  ioTimeMs: number;
}

export interface DiskIoRates {
  device: string;
  readsPerS: number;
  writesPerS: number;
  readBytesPerS: number;
  writeBytesPerS: number;
  /** Share of the interval the device was busy, 0–100. */
  busyPct: number;
}

/** /proc/diskstats; devices that never did any I/O (unused loop/ram/zram) are skipped. */
export function parseDiskstats(text: string): DiskIoCounters[] {
  const out: DiskIoCounters[] = [];
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length < 14) continue;
    const n = (i: number): number => Number(f[i]) || 0;
    const c = {
      device: f[2]!,
      reads: n(3),
      readBytes: n(5) * 512,
      writes: n(7),
      writeBytes: n(9) * 512,
      ioTimeMs: n(12),
    };
    if (c.reads + c.writes === 0) continue;
    out.push(c);
  }
  return out;
}

export interface DiskIoSampler {
  sample(): DiskIoRates[];
}

export function createDiskIoSampler(opts: { procRoot?: string; now?: () => number } = {}): DiskIoSampler {
  const now = opts.now ?? Date.now;
  let prev = new Map<string, DiskIoCounters>();
  let prevMs: number | undefined;
  return {
    sample(): DiskIoRates[] {
      const cur = parseDiskstats(readProc(`${opts.procRoot ?? '/proc'}/diskstats`) ?? '');
      const t = now();
      const dt = prevMs === undefined ? 0 : t - prevMs;
      const rates = cur.map((c) => {
        const p = prev.get(c.device);
        return {
          device: c.device,
          readsPerS: round2(ratePerS(p?.reads, c.reads, dt)),
          writesPerS: round2(ratePerS(p?.writes, c.writes, dt)),
          readBytesPerS: round2(ratePerS(p?.readBytes, c.readBytes, dt)),
          writeBytesPerS: round2(ratePerS(p?.writeBytes, c.writeBytes, dt)),
          busyPct: round2(Math.min(100, ratePerS(p?.ioTimeMs, c.ioTimeMs, dt) / 10)),
        };
      });
      prev = new Map(cur.map((c) => [c.device, c]));
      prevMs = t;
      return rates;
    },
  };
}
