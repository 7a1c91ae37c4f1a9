// Styles are imported for their effect: Bun's bundler emits them as the page's stylesheet.
declare module '*.css'
