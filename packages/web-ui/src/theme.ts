import { type CSSVariablesResolver, createTheme, type MantineColorsTuple } from '@mantine/core';

// One teal-blue for actions; the system font stack (no web font, nothing from another origin).
const brand: MantineColorsTuple = [
  '#e6f6fb',
  '#d3e9f1',
  '#a8d1e2',
  '#79b8d4',
  '#53a3c7',
  '#3a96c0',
  '#2a8fbd',
  '#1a7ca7',
  '#086f96',
  '#006085',
];

export const theme = createTheme({
  primaryColor: 'brand',
  colors: { brand },
  // White text on the primary colour keeps 4.5:1 in light and dark schemes (axe): shade 8
  // (#086f96, 5.6:1) and 7 (#1a7ca7, 4.7:1); shade 6 (#2a8fbd, 3.6:1) failed on the dark page's buttons.
  primaryShade: { light: 8, dark: 7 },
  fontFamily:
    'system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Noto Sans Arabic", "Vazirmatn", "PingFang SC", "Microsoft YaHei", sans-serif',
  defaultRadius: 'md',
  respectReducedMotion: true,
  cursorType: 'pointer',
});

/**
 * Secondary text (descriptions, dimmed labels, placeholders) at 4.5:1 or more against the page
 * in both schemes (WCAG 1.4.3; Mantine's light-scheme grey is ~3.3:1).
 */
export const cssVariablesResolver: CSSVariablesResolver = () => ({
  variables: {},
  light: { '--mantine-color-dimmed': '#495057', '--mantine-color-placeholder': '#5c636a' },
  dark: { '--mantine-color-dimmed': '#a6a7ab', '--mantine-color-placeholder': '#909296' },
});
