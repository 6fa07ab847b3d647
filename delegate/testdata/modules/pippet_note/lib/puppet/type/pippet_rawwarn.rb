# A type whose change writes a warning of Ruby's own (Kernel#warn, as a
# deprecated call does), not through Puppet's logging: Puppet prints the
# line as it is and does not report it.
Puppet::Type.newtype(:pippet_rawwarn) do
  @doc = 'Syncs after a warning of Ruby\'s own on stderr (a test type).'
  newparam(:name, namevar: true)
  newproperty(:ensure) do
    newvalue(:present) { warn 'pippet_rawwarn: a warning of Ruby\'s own' }
    def retrieve
      :absent
    end
  end
end
