import '@mantine/core/styles.css';
import './styles.css';
import { DirectionProvider, MantineProvider } from '@mantine/core';
import { cssVariablesResolver, directionOf } from '@svc/web-ui';
import { QueryClientProvider } from '@tanstack/react-query';
import { RouterProvider } from '@tanstack/react-router';
import { type ReactNode, StrictMode, useEffect, useMemo } from 'react';
import { createRoot } from 'react-dom/client';
import { I18nextProvider } from 'react-i18next';
import { brandTheme, useBranding } from './branding.ts';
import { startI18n } from './i18n.ts';
import { queryClient } from './query.ts';
import { router } from './router.tsx';

const i18n = await startI18n();

createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <I18nextProvider i18n={i18n}>
      <DirectionProvider initialDirection={directionOf(i18n.language)} detectDirection>
        <QueryClientProvider client={queryClient}>
          <Branded>
            <RouterProvider router={router} />
          </Branded>
        </QueryClientProvider>
      </DirectionProvider>
    </I18nextProvider>
  </StrictMode>,
);

/** Mantine with the operator's colour once the brand is known; the document titled with its name. */
function Branded({ children }: { children: ReactNode }) {
  const branding = useBranding();
  const color = branding?.primary_color;
  const theme = useMemo(() => brandTheme(color), [color]);
  useEffect(() => {
    if (branding?.name) document.title = branding.name;
  }, [branding?.name]);
  return (
    <MantineProvider theme={theme} cssVariablesResolver={cssVariablesResolver} defaultColorScheme="auto">
      {children}
    </MantineProvider>
  );
}
