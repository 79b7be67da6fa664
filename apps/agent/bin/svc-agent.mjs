#!/usr/bin/env node
// The `svc-agent` command. Sources are TypeScript, loaded through tsx's ESM hook.
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
