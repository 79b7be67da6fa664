import { Alert, Button, Code, CopyButton, Group, Stack, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';

/** A secret shown once, when made (a webhook's signing secret, an API token): only its holder keeps it. */
export function SecretOnce(props: { secret: string; title: string; body: string; testId: string; onClose: () => void }) {
  const { t } = useTranslation();
  return (
    <Alert color="brand" title={props.title} withCloseButton closeButtonLabel={t('common.close')} onClose={props.onClose} mb="md">
      <Stack gap="xs">
        <Text size="sm">{props.body}</Text>
        <Group gap="xs" wrap="nowrap">
          <Code block dir="ltr" className="svc-mono" style={{ flex: 1, overflowWrap: 'anywhere' }} data-testid={props.testId}>
            {props.secret}
          </Code>
          <CopyButton value={props.secret}>
            {({ copied, copy }) => (
              <Button size="xs" variant="default" onClick={copy}>
                {copied ? t('common.copied') : t('common.copy')}
              </Button>
            )}
          </CopyButton>
        </Group>
      </Stack>
    </Alert>
  );
}
