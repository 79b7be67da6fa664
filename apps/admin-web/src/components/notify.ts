import { notifications } from '@mantine/notifications';
import { translate } from '../i18n.ts';

/** A toast whose close button is named in the reader's language (axe: every button has a name). */
export function notify(message: string, color?: 'red'): void {
  notifications.show({ message, ...(color ? { color } : {}), closeButtonProps: { 'aria-label': translate('common.close') } });
}
