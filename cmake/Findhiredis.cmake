# Finds hiredis and defines hiredis::hiredis. Debian's own HiredisConfig.cmake sets variables
# only, with no imported target; hiredis.pc is what it installs for everyone, so pkg-config
# finds it (inside a function, so its variables stay out of the caller's scope).
# Installed beside ratelabConfig.cmake, which finds the engine's dependencies with it.
include(FindPackageHandleStandardArgs)
if(NOT TARGET hiredis::hiredis)
    function(_ratelab_find_hiredis)
        find_package(PkgConfig QUIET)
        if(PkgConfig_FOUND)
            pkg_check_modules(_hiredis QUIET IMPORTED_TARGET GLOBAL hiredis)
            if(_hiredis_FOUND)
                add_library(hiredis::hiredis ALIAS PkgConfig::_hiredis)
                set(hiredis_VERSION "${_hiredis_VERSION}" PARENT_SCOPE)
            endif()
        endif()
    endfunction()
    _ratelab_find_hiredis()
endif()
if(TARGET hiredis::hiredis)
    set(_hiredis_target hiredis::hiredis)
endif()
find_package_handle_standard_args(hiredis REQUIRED_VARS _hiredis_target VERSION_VAR hiredis_VERSION)
unset(_hiredis_target)
