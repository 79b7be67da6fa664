import { Anchor, type AnchorProps } from '@mantine/core';
import { createLink, type LinkComponent } from '@tanstack/react-router';
import { forwardRef } from 'react';

const MantineAnchor = forwardRef<HTMLAnchorElement, AnchorProps & React.AnchorHTMLAttributes<HTMLAnchorElement>>((props, ref) => (
  <Anchor component="a" ref={ref} {...props} />
));

const Created = createLink(MantineAnchor);

/** A Mantine Anchor that navigates with the router (typed `to`, `params`, `search`). */
export const AnchorLink: LinkComponent<typeof MantineAnchor> = (props) => <Created preload={false} {...props} />;
