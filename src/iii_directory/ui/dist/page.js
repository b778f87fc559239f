// iii-directory console page (skeleton; the full page lands in the next commits).
export const PAGE_VERSION = '0.1.0';

export default async function setup(host) {
  let React;
  try {
    const mod = await import('react');
    React = mod.default ?? mod;
  } catch (error) {
    console.error('[iii-directory] React is unavailable:', error);
    return undefined;
  }
  const h = React.createElement;
  return host.pages.register({
    id: 'directory',
    title: 'Directory',
    configurationId: 'iii-directory',
    render: () => h('div', {className: 'iiid-page', 'data-iii-directory-version': PAGE_VERSION}, 'Directory'),
  });
}
