import { Anchor, Stack, Text, Title } from '@mantine/core';
import { Link } from '@tanstack/react-router';
import { useTranslation } from 'react-i18next';

export function NotFoundScreen() {
  const { t } = useTranslation();
  return (
    <Stack align="center" py="xl">
      <Title order={1} size="h3">
        {t('notFound.title')}
      </Title>
      <Text>{t('notFound.body')}</Text>
      <Anchor component={Link} to="/">
        {t('notFound.home')}
      </Anchor>
    </Stack>
  );
}
