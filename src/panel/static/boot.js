// Runs before the page is drawn (a classic script in <head>): the theme the user chose
// last time, so a dark page never flashes light. The language is set by i18n.js.
(function () {
  try {
    var theme = localStorage.getItem('tunnel-manager.theme');
    if (theme === 'light' || theme === 'dark') document.documentElement.dataset.theme = theme;
  } catch {
    // Storage blocked (privacy settings): the system's theme applies.
  }
})();
