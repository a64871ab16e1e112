export default {
  render({ model, el }) {
    el.classList.add('symsgd-answer-box');
    // the input and the button on one line (the widget's own element is styled by its layout, see AnswerBox)
    const row = document.createElement('div');
    row.style.cssText = 'display:flex;flex-flow:row nowrap;align-items:center;gap:4px';
    const field = document.createElement('div');
    field.className = 'widget-inline-hbox widget-text';
    const label = document.createElement('label');
    label.className = 'widget-label';
    label.style.width = 'auto';
    label.textContent = model.get('description');
    const input = document.createElement('input');
    input.type = 'text';
    input.className = 'widget-input';
    input.style.width = model.get('input_width');
    input.placeholder = model.get('placeholder');
    input.value = model.get('value');
    input.setAttribute('aria-label', model.get('label'));
    input.title = model.get('label');
    field.append(label, input);
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'jupyter-widgets jupyter-button widget-button mod-primary';
    button.style.width = 'auto';
    // as an ipywidgets Button with icon="check" draws it (the icon is decoration: the button is named "Check")
    button.innerHTML = '<i class="fa fa-check" aria-hidden="true"></i>Check';
    button.title = model.get('tooltip');
    const submit = () => {
      model.set('value', input.value);
      model.save_changes();
      model.send({ type: 'submit', value: input.value });  // the text travels with the submission
    };
    input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') { e.preventDefault(); submit(); }
    });
    button.addEventListener('click', submit);
    const follow = () => { if (input.value !== model.get('value')) input.value = model.get('value'); };
    model.on('change:value', follow);
    row.append(field, button);
    el.append(row);
    return () => model.off('change:value', follow);
  },
};
