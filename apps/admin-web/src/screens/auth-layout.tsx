import { Center, Paper, Stack, Title } from '@mantine/core';
import type { ReactNode } from 'react';

/** The narrow card of the screens before sign-in (setup, sign-in). */
export function AuthCard({ title, children }: { title: string; children: ReactNode }) {
  return (
    <Center component="main" mih="100dvh" p="md">
      <Paper withBorder shadow="sm" p="xl" radius="md" w="100%" maw={420}>
        <Stack>
          <Title order={1} size="h3">
            {title}
          </Title>
          {children}
        </Stack>
      </Paper>
    </Center>
  );
}
