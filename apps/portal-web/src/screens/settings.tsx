import { Alert, Button, Card, Group, PasswordInput, SegmentedControl, Stack, Text, Title, useMantineColorScheme } from '@mantine/core';
import { formatDateTimeUtc } from '@svc/format';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { type ReactNode, useState } from 'react';
import { useForm } from 'react-hook-form';
import { useTranslation } from 'react-i18next';
import { api, problemOf, session, unwrap } from '../api.ts';
import { useMe } from '../billing.ts';
import { ConfirmAction } from '../components/confirm-action.tsx';
import { LanguagePicker } from '../components/language-picker.tsx';
import { useAuthMethods } from '../components/methods.ts';
import { newPasswordField } from '../components/new-password.ts';
import { describeProblem } from '../components/problems.ts';
import { Busy, Failure } from '../frame.tsx';

/** As the server's rule (packages/domain/src/auth/credential-fields.ts): said before the request. */

/**
 * The customer's settings: the password (set one, or change it), the sign-in providers linked
 * to the account (link, unlink), the language and the colour scheme (both remembered in this
 * browser), and signing out everywhere.
 */
export function SettingsScreen() {
  const { t } = useTranslation();
  const me = useMe();
  const methods = useAuthMethods();
  if (me.isError || methods.isError)
    return (
      <Failure
        message={t('common.unreachable')}
        retry={() => {
          void me.refetch();
          void methods.refetch();
        }}
      />
    );
  if (!me.data || !methods.data) return <Busy />;
  return (
    <Stack gap="lg">
      <Title order={1} size="h2">
        {t('settings.title')}
      </Title>
      {methods.data.password && <PasswordCard hasPassword={me.data.client.has_password} />}
      {methods.data.oauth.length > 0 && <IdentitiesCard providers={methods.data.oauth} />}
      <AppearanceCard />
      <EverywhereCard />
    </Stack>
  );
}

function Section({ id, title, children }: { id: string; title: string; children: ReactNode }) {
  return (
    <Card withBorder padding="md" radius="md" component="section" aria-labelledby={id} data-testid={id}>
      <Title order={2} size="h4" id={id} mb="xs">
        {title}
      </Title>
      {children}
    </Card>
  );
}

interface PasswordValues {
  current_password: string;
  password: string;
  repeat: string;
}

/**
 * PUT /portal/v1/me/password. With a password: the current one and a new one. Without (signed up
 * by link or provider, or a forgotten password): a new one, accepted within 10 minutes of signing
 * in by link or provider, which the screen says. Every other session ends; this one stays.
 */
function PasswordCard({ hasPassword }: { hasPassword: boolean }) {
  const { t } = useTranslation();
  const newPassword = newPasswordField(t);
  const queryClient = useQueryClient();
  const [saved, setSaved] = useState(false);
  const [showCurrent, setShowCurrent] = useState(hasPassword);
  const form = useForm<PasswordValues>({ defaultValues: { current_password: '', password: '', repeat: '' } });
  const { errors, isSubmitting } = form.formState;
  const submit = form.handleSubmit(async (v) => {
    setSaved(false);
    try {
      await unwrap(
        api.PUT('/portal/v1/me/password', {
          body: { password: v.password, ...(showCurrent && v.current_password ? { current_password: v.current_password } : {}) },
        }),
      );
      form.reset();
      setSaved(true);
      setShowCurrent(true);
      void queryClient.invalidateQueries({ queryKey: ['/portal/v1/me'] });
    } catch (err) {
      const p = problemOf(err) as (ReturnType<typeof problemOf> & { reason?: string }) | null;
      if (p?.status === 403 && p.reason === 'current_password_wrong')
        return form.setError('current_password', { message: t('settings.password.wrong') });
      if (p?.status === 403 && p.reason === 'current_password_required') {
        if (hasPassword) {
          setShowCurrent(true);
          return form.setError('current_password', { message: t('settings.password.currentRequired') });
        }
        return form.setError('root', { message: t('settings.password.signInAgain') });
      }
      const message = describeProblem(t, err, form.setError, ['password', 'current_password']);
      if (message) form.setError('root', { message });
    }
  });
  return (
    <Section id="settings-password" title={hasPassword ? t('settings.password.change') : t('settings.password.set')}>
      <form onSubmit={submit} noValidate>
        <Stack gap="sm">
          {!hasPassword && <Text size="sm">{t('settings.password.none')}</Text>}
          {showCurrent && (
            <PasswordInput
              label={t('settings.password.current')}
              description={hasPassword ? t('settings.password.forgotHint') : undefined}
              autoComplete="current-password"
              error={errors.current_password?.message}
              {...form.register('current_password')}
            />
          )}
          <PasswordInput
            label={t('settings.password.new')}
            description={newPassword.description}
            autoComplete="new-password"
            required
            error={errors.password?.message}
            {...form.register('password', newPassword.rules)}
          />
          <PasswordInput
            label={t('settings.password.repeat')}
            autoComplete="new-password"
            required
            error={errors.repeat?.message}
            {...form.register('repeat', {
              required: t('common.required'),
              validate: (r, all) => r === all.password || t('settings.password.mismatch'),
            })}
          />
          {errors.root && (
            <Alert color="red" role="alert">
              {errors.root.message}
            </Alert>
          )}
          {saved && (
            <Alert color="teal" role="status" data-testid="password-saved">
              {t('settings.password.saved')}
            </Alert>
          )}
          <Group justify="flex-end">
            <Button type="submit" loading={isSubmitting} data-testid="save-password">
              {t('settings.password.save')}
            </Button>
          </Group>
        </Stack>
      </form>
    </Section>
  );
}

/** Reads (once) how linking a provider ended: the callback comes back with #oauth=linked or #oauth_error=… in the fragment. */
function linkOutcome(): { ok: true } | { ok: false; message: string } | null {
  const hash = window.location.hash;
  let out: { ok: true } | { ok: false; message: string } | null = null;
  if (hash === '#oauth=linked') out = { ok: true };
  else if (hash.startsWith('#oauth_error=')) {
    try {
      out = { ok: false, message: decodeURIComponent(hash.slice('#oauth_error='.length)).slice(0, 300) };
    } catch {
      out = { ok: false, message: '' };
    }
  }
  if (out) history.replaceState(null, '', window.location.pathname + window.location.search);
  return out;
}

/**
 * The sign-in providers of the installation, each linked to this account or not (GET
 * /auth/identities): "Link" opens the provider in this tab (POST …/link?session=cookie; the
 * callback comes back here), "Unlink" removes it (DELETE /auth/identities/{provider}).
 */
function IdentitiesCard({ providers }: { providers: string[] }) {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const [outcome] = useState(linkOutcome);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const identities = useQuery({
    queryKey: ['/portal/v1/auth/identities'],
    queryFn: () => unwrap(api.GET('/portal/v1/auth/identities')),
  });
  const link = async (provider: string) => {
    setBusy(provider);
    setError(null);
    try {
      const started = await unwrap(
        api.POST('/portal/v1/auth/oauth/{provider}/link', { params: { path: { provider }, query: { session: 'cookie' } } }),
      );
      window.location.assign(started.authorization_url);
    } catch (err) {
      setError(describeProblem(t, err));
      setBusy(null);
    }
  };
  const unlink = async (provider: string) => {
    setBusy(provider);
    setError(null);
    try {
      await unwrap(api.DELETE('/portal/v1/auth/identities/{provider}', { params: { path: { provider } } }));
      await queryClient.invalidateQueries({ queryKey: ['/portal/v1/auth/identities'] });
    } catch (err) {
      setError(describeProblem(t, err));
    } finally {
      setBusy(null);
    }
  };
  return (
    <Section id="settings-identities" title={t('settings.identities.title')}>
      <Stack gap="sm">
        <Text size="sm">{t('settings.identities.intro')}</Text>
        {outcome?.ok && (
          <Alert color="teal" role="status" data-testid="linked">
            {t('settings.identities.linked')}
          </Alert>
        )}
        {outcome && !outcome.ok && (
          <Alert color="red" role="alert" title={t('settings.identities.refused')}>
            {outcome.message}
          </Alert>
        )}
        {error && (
          <Alert color="red" role="alert">
            {error}
          </Alert>
        )}
        {identities.isError ? (
          <Failure message={t('common.unreachable')} retry={() => identities.refetch()} />
        ) : !identities.data ? (
          <Busy />
        ) : (
          providers.map((provider) => {
            const identity = identities.data.items.find((i) => i.provider === provider);
            return (
              <Group key={provider} justify="space-between" wrap="nowrap" data-testid={`identity-${provider}`}>
                <Stack gap={0} miw={0}>
                  <Text fw={600}>{provider}</Text>
                  <Text size="xs" c="dimmed" truncate="end">
                    {identity
                      ? t('settings.identities.linkedAs', {
                          who: identity.email ?? t('settings.identities.noEmail'),
                          when: formatDateTimeUtc(identity.created_at),
                        })
                      : t('settings.identities.notLinked')}
                  </Text>
                </Stack>
                {identity ? (
                  <Button variant="default" size="xs" loading={busy === provider} onClick={() => unlink(provider)} style={{ flex: 'none' }}>
                    {t('settings.identities.unlink')}
                  </Button>
                ) : (
                  <Button size="xs" loading={busy === provider} onClick={() => link(provider)} style={{ flex: 'none' }}>
                    {t('settings.identities.link')}
                  </Button>
                )}
              </Group>
            );
          })
        )}
      </Stack>
    </Section>
  );
}

/** The language (as the header's picker) and the colour scheme: light, dark, or the device's; both remembered here. */
function AppearanceCard() {
  const { t } = useTranslation();
  const { colorScheme, setColorScheme } = useMantineColorScheme();
  return (
    <Section id="settings-appearance" title={t('settings.appearance')}>
      <Stack gap="md">
        <div>
          <Text component="label" htmlFor="settings-language" size="sm" fw={500} display="block" mb={4}>
            {t('frame.language')}
          </Text>
          <LanguagePicker id="settings-language" testId="settings-language" />
        </div>
        <div>
          <Text id="settings-theme" size="sm" fw={500} mb={4}>
            {t('settings.theme')}
          </Text>
          <SegmentedControl
            aria-labelledby="settings-theme"
            value={colorScheme}
            onChange={(v) => setColorScheme(v as 'light' | 'dark' | 'auto')}
            data={[
              { value: 'light', label: t('settings.themeLight') },
              { value: 'dark', label: t('settings.themeDark') },
              { value: 'auto', label: t('settings.themeAuto') },
            ]}
            data-testid="theme"
          />
        </div>
      </Stack>
    </Section>
  );
}

/** Sign out everywhere (POST /portal/v1/auth/logout-everywhere): every session ends, this one too; asked first. */
function EverywhereCard() {
  const { t } = useTranslation();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const signOutEverywhere = async () => {
    await unwrap(api.POST('/portal/v1/auth/logout-everywhere'));
    session.clear();
    queryClient.clear();
    await navigate({ to: '/' });
  };
  return (
    <Section id="account-title" title={t('account.title')}>
      <Text size="sm" mb="sm">
        {t('account.everywhereHint')}
      </Text>
      <ConfirmAction
        label={t('account.everywhere')}
        testId="sign-out-everywhere"
        color="red"
        title={t('account.confirmTitle')}
        text={t('account.confirm')}
        confirmLabel={t('account.everywhere')}
        run={signOutEverywhere}
      />
    </Section>
  );
}
