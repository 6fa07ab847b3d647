# A type whose change fails with a message of several lines (as a
# command's output quoted in an error): Puppet logs it as one record.
Puppet::Type.newtype(:pippet_multiline) do
  @doc = 'Fails to sync with a message of three lines (a test type).'
  newparam(:name, namevar: true)
  newproperty(:ensure) do
    newvalue(:present) { raise Puppet::Error, "first line\nsecond line\nthird line" }
    def retrieve
      :absent
    end
  end
end
