#!/usr/bin/env node
// The discovery_agent binary: registers tsx's ESM loader, then runs src/agent/main.ts.
import { register } from 'tsx/esm/api';

register();
await import(new URL('../src/agent/main.ts', import.meta.url).href);
