# A Resource API type for pippet's delegation tests: a file holding a text.
require 'puppet/resource_api'

Puppet::ResourceApi.register_type(
  name: 'pippet_note',
  docs: 'A file (absolute path) holding exactly the given text.',
  features: ['simple_get_filter'],
  attributes: {
    ensure: { type: 'Enum[present, absent]', desc: 'Whether the file exists.', default: 'present' },
    name: { type: 'Pattern[/\A\//]', desc: 'The absolute path.', behaviour: :namevar },
    text: { type: 'String', desc: 'The text.' },
  },
)
