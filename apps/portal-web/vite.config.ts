import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Built once, served at any path: asset URLs are relative to the <base href> the server writes
// into index.html at run time (packages/http/src/web-app.ts), so a reverse proxy's secret prefix
// needs no rebuild. `pnpm --filter @svc/portal-web dev` proxies the API to a running `svc start`.
export default defineConfig(({ command }) => ({
  base: command === 'build' ? './' : '/portal/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 600,
    reportCompressedSize: false,
  },
  server: {
    proxy: { '/portal/v1': 'http://127.0.0.1:8080', '/sub': 'http://127.0.0.1:8080' },
  },
}));
