import '@mantine/core/styles.css';
import './styles.css';
import { DirectionProvider, MantineProvider } from '@mantine/core';
import { cssVariablesResolver, directionOf, theme } from '@svc/web-ui';
import { QueryClientProvider } from '@tanstack/react-query';
import { RouterProvider } from '@tanstack/react-router';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { I18nextProvider } from 'react-i18next';
import { startI18n } from './i18n.ts';
import { queryClient } from './query.ts';
import { router } from './router.tsx';

const i18n = await startI18n();

createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <I18nextProvider i18n={i18n}>
      <DirectionProvider initialDirection={directionOf(i18n.language)} detectDirection>
        <MantineProvider theme={theme} cssVariablesResolver={cssVariablesResolver} defaultColorScheme="auto">
          <QueryClientProvider client={queryClient}>
            <RouterProvider router={router} />
          </QueryClientProvider>
        </MantineProvider>
      </DirectionProvider>
    </I18nextProvider>
  </StrictMode>,
);
