import { fileURLToPath } from 'node:url';
import { describeCatalogues } from '@svc/testkit/web-app-catalogues';

// Every string of the panel is in a catalogue (issue 30.7), in all four languages.
describeCatalogues('the admin panel', fileURLToPath(new URL('../src/', import.meta.url)), 100);
