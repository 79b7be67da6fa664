import { Paper, Stack, Title } from '@mantine/core';
import type { ReactNode } from 'react';

/** The card of the screens before sign-in: the whole column on a phone, a card on a wide screen. */
export function AuthCard({ title, children }: { title: string; children: ReactNode }) {
  return (
    <Paper withBorder p={{ base: 'md', xs: 'xl' }} radius="md">
      <Stack>
        <Title order={1} size="h3">
          {title}
        </Title>
        {children}
      </Stack>
    </Paper>
  );
}
