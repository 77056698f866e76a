// Progressive enhancement for the annotation form: without JavaScript every option stays visible.
(function () {
  var form = document.getElementById('answer-form');
  if (!form) return;
  function sync() {
    var chosen = form.querySelector('input[name=answer]:checked');
    form.querySelectorAll('[data-after]').forEach(function (group) {
      var show = chosen && group.getAttribute('data-after').split(' ').indexOf(chosen.value) >= 0;
      group.hidden = !show;
      if (!show) {  // an option that no longer applies to the answer is not sent with it
        group.querySelectorAll('input[type=checkbox]').forEach(function (box) { box.checked = false; });
      }
    });
  }
  form.addEventListener('change', sync);
  sync();
  document.addEventListener('keydown', function (event) {
    if (event.target.tagName === 'TEXTAREA' || event.altKey || event.ctrlKey || event.metaKey) return;
    var radio = form.querySelector('input[name=answer][data-key="' + event.key + '"]');
    if (radio) { radio.checked = true; sync(); event.preventDefault(); }
    else if (event.key === 'Enter' && event.target.tagName !== 'A') { form.requestSubmit(); event.preventDefault(); }
  });
})();
