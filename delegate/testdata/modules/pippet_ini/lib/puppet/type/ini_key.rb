# A small custom type for pippet's delegation tests: one key of an
# INI-style file ("key = value" lines under "[section]" headers).
Puppet::Type.newtype(:ini_key) do
  @doc = 'One key in an INI-style file. Title: SECTION/KEY.'

  ensurable do
    defaultvalues
    defaultto :present
  end

  newparam(:name, namevar: true) do
    desc 'SECTION/KEY'
    validate do |v|
      raise ArgumentError, "ini_key title must be SECTION/KEY, not '#{v}'" unless v =~ %r{\A[^/\[\]]+/[^/=\s]+\z}
    end
  end

  newparam(:path) do
    desc 'The file (absolute path).'
    validate do |v|
      raise ArgumentError, "path must be absolute, not '#{v}'" unless v.is_a?(String) && v.start_with?('/')
    end
  end

  newproperty(:value) do
    desc 'The value; no line breaks.'
    validate do |v|
      raise ArgumentError, "value must not contain a line break" if v.to_s.include?("\n")
    end
    munge(&:to_s)
  end

  validate do
    raise ArgumentError, 'path is required' if self[:path].nil?
  end
end
