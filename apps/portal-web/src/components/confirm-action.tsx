import { Alert, Button, Group, Modal, Stack, Text } from '@mantine/core';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { describeProblem } from './problems.ts';

/**
 * A button whose action is asked first (a new link, sign out everywhere): the dialog says what
 * happens, the red button does it; a refusal is shown in the dialog, which stays open. `run`
 * throws on failure; it closes the dialog itself when it navigates away.
 */
export function ConfirmAction(props: {
  label: string;
  /** The button's accessible name when several share a label ("Remove iPhone 15"). */
  ariaLabel?: string;
  testId: string;
  color?: string;
  title: string;
  text: string;
  confirmLabel: string;
  run: () => Promise<void>;
}) {
  const { t } = useTranslation();
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await props.run();
      setAsking(false);
    } catch (err) {
      setError(describeProblem(t, err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <Button
        variant="default"
        {...(props.color ? { color: props.color } : {})}
        onClick={() => setAsking(true)}
        data-testid={props.testId}
        {...(props.ariaLabel ? { 'aria-label': props.ariaLabel } : {})}
      >
        {props.label}
      </Button>
      <Modal
        opened={asking}
        onClose={() => setAsking(false)}
        title={props.title}
        closeButtonProps={{ 'aria-label': t('common.close') }}
        centered
      >
        <Stack gap="md">
          <Text size="sm">{props.text}</Text>
          {error && (
            <Alert color="red" role="alert">
              {error}
            </Alert>
          )}
          <Group justify="flex-end" gap="xs">
            <Button variant="default" onClick={() => setAsking(false)}>
              {t('common.cancel')}
            </Button>
            <Button color="red" onClick={confirm} loading={busy} data-testid={`${props.testId}-confirm`}>
              {props.confirmLabel}
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}
