/** The registry of `sentinel` commands: help, dispatch and shell completion all derive from this list. */
import type { Command } from '../command.js';
import { apply } from './apply.js';
import { completionCommand } from './completion.js';
import { exportCmd } from './export.js';
import { importCmd } from './import.js';
import { login, logout } from './login.js';
import { monitors } from './monitors.js';
import { report, status } from './status.js';
import { backup, users } from './users.js';

export const COMMANDS: readonly Command[] = [
  login,
  logout,
  status,
  monitors,
  report,
  apply,
  exportCmd,
  importCmd,
  users,
  backup,
  completionCommand(() => COMMANDS),
];
